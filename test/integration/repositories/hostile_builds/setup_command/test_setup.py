def test_the_setup_ran():
    assert True
