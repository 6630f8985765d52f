//! Counts for people: "1 file", "3 files", "1,024 bytes".

/// `count` followed by `unit`, in the plural unless the count is one: `counted(3, "file")` is "3 files".
pub fn counted(count: u64, unit: &str) -> String {
    let mut buffer = itoa::Buffer::new();
    let mut text = String::from(grouped(buffer.format(count)));
    text.push(' ');
    text.push_str(unit);
    if count > 1 {
        text.push('s');
    }
    text
}

/// Digits in groups of three, separated by commas: "1024" is "1,024".
fn grouped(digits: &str) -> String {
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn groups_thousands() {
        assert_eq!(counted(1024, "byte"), "1,024 bytes");
        assert_eq!(counted(1, "file"), "1 file");
    }

    #[test]
    fn zero_is_plural() {
        assert_eq!(counted(0, "file"), "0 files");
    }
}
