//! Command-line arguments of the networking examples (`--name value` pairs).

use std::collections::BTreeMap;

use joule_physics::net::LinkConditions;

/// `--name value` pairs.
#[derive(Debug, Default)]
pub struct Args(BTreeMap<String, String>);

impl Args {
    /// The process's arguments.
    #[must_use]
    pub fn parse() -> Args {
        let mut map = BTreeMap::new();
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                map.insert(name.to_owned(), it.next().unwrap_or_default());
            }
        }
        Args(map)
    }

    /// The value of `--name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    /// The value of `--name` parsed, or `default` when absent or unparsable.
    #[must_use]
    pub fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
        self.0
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}

/// A 32-byte key from 64 hex digits.
///
/// # Errors
/// A message naming what was wrong.
pub fn parse_key(hex: &str) -> Result<[u8; 32], String> {
    if hex.len() != 64 {
        return Err(format!("--key: expected 64 hex digits, got {}", hex.len()));
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| format!("--key: {e}"))?;
    }
    Ok(key)
}

/// The simulated conditions of `--latency`, `--jitter` (seconds, one way) and `--loss`
/// (a probability), each 0 when absent; 1% duplicated and 2% reordered when any is set.
#[must_use]
pub fn conditions(args: &Args) -> LinkConditions {
    let c = LinkConditions {
        latency: args.num("latency", 0.0),
        jitter: args.num("jitter", 0.0),
        loss: args.num("loss", 0.0),
        ..LinkConditions::PERFECT
    };
    if c == LinkConditions::PERFECT {
        c
    } else {
        LinkConditions {
            duplicate: 0.01,
            reorder: 0.02,
            ..c
        }
    }
}
