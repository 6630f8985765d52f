pub fn pad() {}
