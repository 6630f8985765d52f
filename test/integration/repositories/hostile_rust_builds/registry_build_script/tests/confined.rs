#[test]
fn the_dependency_build_script_reached_nothing_forbidden() {
    assert_eq!(hostile_build::FORBIDDEN_REACHED, 0, "{}", hostile_build::ATTEMPTS);
}

#[test]
fn the_own_build_script_reached_nothing_forbidden() {
    assert_eq!(uses_hostile_build::FORBIDDEN_REACHED, 0, "{}", uses_hostile_build::ATTEMPTS);
}
