// A hostile build script: what a crate's build.rs could try while cargo compiles it. Each attempt
// is recorded (reached or not, and what happened) in $OUT_DIR/attempts.json, and the count of
// forbidden ones reached in $OUT_DIR/summary.rs, which the crate includes. The targets are
// written in by the test (@TEMPORAL@, @REGISTRY@).
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

struct Attempt {
    attempt: &'static str,
    reached: bool,
    detail: String,
}

fn connect(target: &str) -> Result<TcpStream, String> {
    let address = target
        .to_socket_addrs()
        .map_err(|error| error.to_string())?
        .next()
        .ok_or("no address")?;
    TcpStream::connect_timeout(&address, Duration::from_secs(5)).map_err(|error| error.to_string())
}

fn direct(attempt: &'static str, target: &str) -> Attempt {
    match connect(target) {
        Ok(_) => Attempt { attempt, reached: true, detail: "connected".into() },
        Err(error) => Attempt { attempt, reached: false, detail: error },
    }
}

/// An HTTP request through the build's proxy (HTTPS_PROXY): CONNECT for a tunnel, or a GET in absolute form.
fn through_proxy(attempt: &'static str, request: String) -> Attempt {
    let proxy = std::env::var("HTTPS_PROXY").or_else(|_| std::env::var("https_proxy"));
    let Ok(proxy) = proxy else {
        return Attempt { attempt, reached: false, detail: "no proxy variable".into() };
    };
    let address = proxy.trim_start_matches("http://").trim_end_matches('/').to_string();
    let mut stream = match connect(&address) {
        Ok(stream) => stream,
        Err(error) => return Attempt { attempt, reached: false, detail: error },
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    if let Err(error) = stream.write_all(request.as_bytes()) {
        return Attempt { attempt, reached: false, detail: error.to_string() };
    }
    let mut buffer = [0u8; 512];
    let read = stream.read(&mut buffer).unwrap_or(0);
    let status = String::from_utf8_lossy(&buffer[..read]).lines().next().unwrap_or("").to_string();
    Attempt { attempt, reached: status.contains(" 200 "), detail: status }
}

fn read_file(attempt: &'static str, paths: &[String]) -> Attempt {
    for path in paths {
        if let Ok(text) = std::fs::read_to_string(path) {
            return Attempt { attempt, reached: true, detail: format!("{}: {}", path, text.len()) };
        }
    }
    Attempt { attempt, reached: false, detail: format!("none of {}", paths.join(", ")) }
}

fn variables(attempt: &'static str) -> Attempt {
    let found: Vec<String> = std::env::vars()
        .map(|(name, _)| name)
        .filter(|name| name.contains("TOKEN") || name.starts_with("CARGO_REGISTRIES_") || name == "CARGO_REGISTRY_TOKEN")
        .collect();
    Attempt { attempt, reached: !found.is_empty(), detail: found.join(",") }
}

fn escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c if (c as u32) < 0x20 => vec![' '],
            c => vec![c],
        })
        .collect()
}

fn main() {
    let temporal = "@TEMPORAL@";
    let registry = "@REGISTRY@";
    let home = std::env::var("HOME").unwrap_or_default();
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_default();
    let credentials: Vec<String> = [
        format!("{}/credentials.toml", cargo_home),
        format!("{}/credentials", cargo_home),
        format!("{}/.cargo/credentials.toml", home),
        format!("{}/.cargo/credentials", home),
        "/root/.cargo/credentials.toml".to_string(),
    ]
    .to_vec();
    let attempts = vec![
        direct("the Temporal server's port", temporal),
        direct("a host that is no registry", "example.org:80"),
        through_proxy(
            "the Temporal server's port through the proxy",
            format!("CONNECT {t} HTTP/1.1\r\nHost: {t}\r\n\r\n", t = temporal),
        ),
        through_proxy(
            "a host that is no registry through the proxy",
            "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n".to_string(),
        ),
        read_file("cargo's credentials", &credentials),
        variables("token variables"),
        through_proxy(
            "the registry through the proxy",
            format!("GET http://{r}/index/config.json HTTP/1.1\r\nHost: {r}\r\nConnection: close\r\n\r\n", r = registry),
        ),
    ];
    let forbidden = attempts
        .iter()
        .filter(|attempt| attempt.reached && attempt.attempt != "the registry through the proxy")
        .count();
    let json: Vec<String> = attempts
        .iter()
        .map(|a| format!("{{\"attempt\":\"{}\",\"reached\":{},\"detail\":\"{}\"}}", escape(a.attempt), a.reached, escape(&a.detail)))
        .collect();
    let out = std::env::var("OUT_DIR").unwrap();
    std::fs::write(format!("{}/attempts.json", out), format!("[{}]", json.join(","))).unwrap();
    std::fs::write(format!("{}/summary.rs", out), format!("pub const FORBIDDEN_REACHED: usize = {};\n", forbidden)).unwrap();
    for a in &attempts {
        println!("cargo:warning=probe: {}: {} ({})", a.attempt, if a.reached { "REACHED" } else { "blocked" }, a.detail);
    }
    println!("cargo:rerun-if-changed=build.rs");
}
