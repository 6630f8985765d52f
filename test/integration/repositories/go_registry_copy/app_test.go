package app

import "testing"

func TestSame(t *testing.T) {
	if !Same([]int{1}, []int{1}) {
		t.Fatal("want same")
	}
}
