//! A server and two clients as separate processes over UDP on 127.0.0.1 (renet +
//! netcode), every datagram both ways conditioned to issue 32's 100 ms latency, 20 ms
//! jitter and 5% loss: both clients' views converge to the server's, every push reaches
//! it, and the recording a client writes of what it presented loads and replays in the
//! viewer's data; and a client whose connect token was not made with the server's key
//! never joins.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use joule_examples::viewer::ViewerData;
use joule_physics::net::udp::{UdpClient, UdpServer, connect_token};
use joule_physics::recording::{POSE_FLOATS, Recording};

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn two_client_processes_converge_to_the_server_process() {
    let dir = std::env::temp_dir().join(format!("joule-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server_log = dir.join("server.log");
    let mut server = Command::new(env!("CARGO_BIN_EXE_net_server"))
        .args([
            "--key",
            KEY,
            "--port",
            "0",
            "--scene",
            "pyramid20",
            "--rain",
            "100",
            "--seconds",
            "7",
        ])
        .args([
            "--bandwidth",
            "200000",
            "--latency",
            "0.1",
            "--jitter",
            "0.02",
            "--loss",
            "0.05",
            "--log",
        ])
        .arg(&server_log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("LISTEN ")
        .expect("the server prints LISTEN <addr>")
        .to_owned();
    let clients: Vec<_> = (1..=2)
        .map(|id| {
            let log = dir.join(format!("client{id}.log"));
            let mut command = Command::new(env!("CARGO_BIN_EXE_net_client"));
            if id == 1 {
                command.arg("--record").arg(dir.join("client1.jrec"));
            }
            let child = command
                .args([
                    "--server",
                    &addr,
                    "--key",
                    KEY,
                    "--id",
                    &id.to_string(),
                    "--seconds",
                    "5.5",
                    "--latency",
                    "0.1",
                    "--jitter",
                    "0.02",
                    "--loss",
                    "0.05",
                    "--log",
                ])
                .arg(&log)
                .spawn()
                .unwrap();
            (child, log)
        })
        .collect();
    let mut logs = Vec::new();
    for (mut child, log) in clients {
        assert!(child.wait().unwrap().success(), "a client failed");
        logs.push(read(&log));
    }
    assert!(server.wait().unwrap().success(), "the server failed");
    let server_log = read(&server_log);
    for (c, log) in logs.iter().enumerate() {
        let id = c + 1;
        let mut tick = None;
        let mut compared = 0;
        let (mut pushes, mut bodies, mut recorded) = (0, 0, 0);
        for l in log.lines() {
            let f: Vec<&str> = l.split(' ').collect();
            match f[0] {
                "PUSHES" => pushes = f[1].parse().unwrap(),
                "BODIES" => bodies = f[1].parse().unwrap(),
                "RECORDED_BODIES" => recorded = f[1].parse().unwrap(),
                _ => {
                    tick = Some(f[0]);
                    let p: Vec<f32> = f[2..5].iter().map(|v| v.parse().unwrap()).collect();
                    let prefix = format!("{} {} ", f[0], f[1]);
                    let truth = server_log
                        .lines()
                        .find(|s| s.starts_with(&prefix))
                        .unwrap_or_else(|| {
                            panic!(
                                "client {id}: tick {} body {} not in the server's log",
                                f[0], f[1]
                            )
                        });
                    let t: Vec<f32> = truth
                        .split(' ')
                        .skip(2)
                        .map(|v| v.parse().unwrap())
                        .collect();
                    let err = (0..3).map(|k| (p[k] - t[k]).abs()).fold(0.0, f32::max);
                    // Quantized at 1 mm: within half of it, plus f32 rounding.
                    assert!(
                        err <= 0.0006,
                        "client {id}, body {}: {p:?} against {t:?}",
                        f[1]
                    );
                    compared += 1;
                }
            }
        }
        let tick = tick.unwrap_or_else(|| panic!("client {id} rebuilt no snapshot"));
        let server_bodies = server_log
            .lines()
            .filter(|s| s.starts_with(&format!("{tick} ")))
            .count();
        assert_eq!(bodies, server_bodies, "client {id} shows every body");
        assert!(compared > 200, "client {id}: {compared} bodies compared");
        let stats = server_log
            .lines()
            .find(|s| s.starts_with(&format!("STATS {id} ")))
            .unwrap();
        let applied: u32 = stats.split(' ').nth(2).unwrap().parse().unwrap();
        assert!(pushes > 3, "client {id} pushed {pushes} times");
        assert_eq!(applied, pushes, "client {id}'s pushes all applied");
        if id == 1 {
            replays(&dir.join("client1.jrec"), recorded);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The recording client 1 wrote of its mirror loads, holds every body it showed with a
/// finite pose in its last frame (`bodies`: the mirror's count when it recorded that
/// frame; the server's scene spawns and removes bodies, so the count at exit may differ),
/// and converts to what the viewer's page fetches.
fn replays(path: &std::path::Path, bodies: usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let recording = Recording::read(&bytes).unwrap();
    // About 30 frames a second for the 5.5 s the client ran, less the time to join.
    assert!(
        recording.frames.len() > 60,
        "{} frames",
        recording.frames.len()
    );
    assert!(
        recording.bodies.len() >= bodies,
        "{} bodies",
        recording.bodies.len()
    );
    let last = recording.frames.last().unwrap();
    let shown = last
        .poses
        .chunks(POSE_FLOATS)
        .filter(|p| p.iter().all(|x| x.is_finite()))
        .count();
    assert_eq!(shown, bodies, "bodies in the last frame");
    // Frames follow one another as the presentation reached each snapshot.
    assert!(recording.frames.windows(2).all(|w| w[1].step > w[0].step));
    let data = ViewerData::new(&recording);
    let (_, poses) = data.get("/poses.bin").unwrap();
    assert_eq!(
        poses.len(),
        recording.frames.len() * recording.bodies.len() * POSE_FLOATS * 4
    );
    assert!(data.get("/scene.json").is_some());
}

#[test]
fn a_client_with_a_forged_token_cannot_join() {
    let key = [7u8; 32];
    let mut server = UdpServer::bind(SocketAddr::from(([127, 0, 0, 1], 0)), 32, key, 4).unwrap();
    let addr = server.addr();
    // Made with another key: the server cannot decrypt its private part.
    let forged = connect_token(32, 1, addr, &[8u8; 32], 300).unwrap();
    let mut intruder = UdpClient::connect(forged, SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    // A genuine one, for contrast.
    let genuine = connect_token(32, 2, addr, &key, 300).unwrap();
    let mut guest = UdpClient::connect(genuine, SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    let start = Instant::now();
    let mut last = start;
    let mut joined = Vec::new();
    while start.elapsed() < Duration::from_secs(2) {
        let dt = last.elapsed();
        last = Instant::now();
        server.update(dt).unwrap();
        joined.extend(server.events());
        server.flush();
        let _ = intruder.update(dt);
        let _ = intruder.flush();
        let _ = guest.update(dt);
        let _ = guest.flush();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(guest.is_connected(), "the genuine client joined");
    assert!(!intruder.is_connected(), "the forged token was refused");
    assert_eq!(
        joined,
        vec![joule_physics::net::udp::UdpEvent::Connected(2)]
    );
    assert_eq!(server.connected(), 1);
}
