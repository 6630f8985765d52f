include!(concat!(env!("OUT_DIR"), "/summary.rs"));

/// What this crate's build script recorded while it was compiled.
pub const ATTEMPTS: &str = include_str!(concat!(env!("OUT_DIR"), "/attempts.json"));
