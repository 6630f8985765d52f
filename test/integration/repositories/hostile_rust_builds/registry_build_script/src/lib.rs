// This crate's own build script ran in the sandbox (the test run), its dependency's in the build.
include!(concat!(env!("OUT_DIR"), "/summary.rs"));

pub const ATTEMPTS: &str = include_str!(concat!(env!("OUT_DIR"), "/attempts.json"));
