//! A server and two clients over the simulated network: views converge under issue 32's
//! conditions, inputs arrive though packets are lost, areas of interest and bandwidth
//! hold, and one client can neither push another's body nor starve it by flooding.

use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::{Quat, Vec3};
use joule_physics::net::{
    Action, Channel, Client, ClientMessage, Codec, InputFrame, LinkConditions, NetConfig, Server,
    ServerDesc, SimEndpoint, SimNetwork, Transport, pump_client, pump_server,
};
use joule_physics::shape::Shape;

use crate::common;

const SERVER: u32 = 0;

struct Session {
    net: SimNetwork,
    server: Server,
    server_end: SimEndpoint,
    clients: Vec<(Client, SimEndpoint, f64)>,
    /// The server's pose of every replicated body after each tick, by tick.
    history: Vec<Vec<(u32, Vec3, Quat)>>,
    owned: Vec<(u32, BodyId)>,
    far: BodyId,
    t: f64,
}

/// A ground, three small pyramids, spheres raining from up to 12 m, one sphere per
/// client to push, and one box 45 m away at the ground's edge.
fn scene() -> (joule_physics::world::World, Vec<BodyId>, BodyId) {
    let mut world = common::world(1);
    common::ground(&mut world, 0.5);
    for (k, x) in [-6.0f32, 0.0, 6.0].into_iter().enumerate() {
        for row in 0..4 {
            for i in 0..(4 - row) {
                let p = Vec3::new(
                    x + (i as f32 - (3 - row) as f32 / 2.0) * 1.05,
                    0.5 + row as f32,
                    4.0 + k as f32,
                );
                common::cube(&mut world, 0.5, p);
            }
        }
    }
    for i in 0..20 {
        let p = Vec3::new(
            (i % 5) as f32 * 2.0 - 4.0,
            4.0 + (i / 5) as f32 * 2.0,
            -4.0 + (i % 3) as f32,
        );
        world
            .create_body(&BodyDesc::dynamic(Shape::sphere(0.3).unwrap(), p))
            .unwrap();
    }
    let pushed = (0..2)
        .map(|c| {
            world
                .create_body(&BodyDesc::dynamic(
                    Shape::sphere(0.5).unwrap(),
                    Vec3::new(-8.0 + 16.0 * c as f32, 0.5, -10.0),
                ))
                .unwrap()
        })
        .collect();
    let far = common::cube(&mut world, 0.5, Vec3::new(45.0, 0.5, 0.0));
    (world, pushed, far)
}

impl Session {
    fn new(conditions: LinkConditions, seed: u64) -> Session {
        let codec = Codec::new(NetConfig::default()).unwrap();
        let (world, pushed, far) = scene();
        let net = SimNetwork::new(conditions, seed);
        let mut server = Server::new(world, codec.clone(), ServerDesc::default());
        let mut clients = Vec::new();
        let mut owned = Vec::new();
        for c in 1..=2u32 {
            // Client 1 sees everything; client 2 a 30 m circle around the origin.
            let radius = if c == 1 { 1000.0 } else { 30.0 };
            server.add_client(c, Vec3::ZERO, radius).unwrap();
            let net_id = server.grant(c, pushed[c as usize - 1]).unwrap();
            owned.push((net_id, pushed[c as usize - 1]));
            // Each client's clock starts elsewhere: synchronization has work to do.
            clients.push((
                Client::new(codec.clone(), 77 + u64::from(c)),
                net.endpoint(c),
                1000.0 * f64::from(c) + 0.37,
            ));
        }
        Session {
            server_end: net.endpoint(SERVER),
            net,
            server,
            clients,
            history: Vec::new(),
            owned,
            far,
            t: 0.0,
        }
    }

    fn record(&mut self) {
        while self.history.len() <= self.server.tick() as usize {
            let w = self.server.world();
            let poses = w
                .bodies()
                .filter_map(|b| {
                    self.server
                        .net_id(b.id())
                        .map(|n| (n, b.position(), b.rotation()))
                })
                .collect();
            self.history.push(poses);
        }
    }

    /// Runs to `until`, calling `each` at every 1/240 s with the session.
    fn run(&mut self, until: f64, mut each: impl FnMut(&mut Session)) {
        while self.t < until {
            self.t += 1.0 / 240.0;
            let t = self.t;
            self.net.advance(t);
            pump_server(&mut self.server, &mut self.server_end, t);
            self.record();
            for (client, end, offset) in &mut self.clients {
                pump_client(client, end, SERVER, t + *offset);
            }
            each(self);
        }
    }

    /// The server's position of `net_id` at server time `t`, between its ticks.
    fn server_position(&self, net_id: u32, t: f64) -> Option<Vec3> {
        let k = t * 60.0;
        let (a, b) = (k.floor() as usize, k.ceil() as usize);
        let find = |tick: usize| {
            self.history
                .get(tick)?
                .iter()
                .find(|e| e.0 == net_id)
                .map(|e| e.1)
        };
        let (pa, pb) = (find(a)?, find(b)?);
        Some(pa.lerp(pb, (k - a as f64) as f32))
    }

    /// Each client's position error of every dynamic body it shows, now.
    fn errors(&self, out: &mut Vec<f32>) {
        for (client, _, offset) in &self.clients {
            let now = self.t + offset;
            let Some(pt) = client.presentation_time(now) else {
                continue;
            };
            for (&net_id, body) in client.bodies() {
                if body.motion != joule_physics::net::NetMotion::Dynamic {
                    continue;
                }
                let (Some(shown), Some(truth)) =
                    (client.pose_at(net_id, pt), self.server_position(net_id, pt))
                else {
                    continue;
                };
                let e = Vec3::from(shown.translation).distance(truth);
                if e > 1.0 && std::env::var("NET_DEBUG").is_ok() {
                    println!(
                        "t {:.3} pt {pt:.3} body {net_id}: shown {} truth {truth}",
                        self.t, shown.translation
                    );
                }
                out.push(e);
            }
        }
    }
}

fn mean_p99(errors: &mut [f32]) -> (f32, f32) {
    errors.sort_by(f32::total_cmp);
    let mean = errors.iter().sum::<f32>() / errors.len() as f32;
    (mean, errors[errors.len() * 99 / 100])
}

/// Every half second each client pushes its sphere along x, alternating direction.
fn push_now(s: &mut Session, pushes: &mut [u32; 2], last: &mut f64) {
    if s.t - *last < 0.5 || s.t > 7.0 {
        return;
    }
    *last = s.t;
    for (c, (client, _, _)) in s.clients.iter_mut().enumerate() {
        let Some(&body) = client.owned().first() else {
            continue;
        };
        let dir = if pushes[c].is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        client.push(body, Vec3::new(dir * 400.0, 0.0, 0.0)).unwrap();
        pushes[c] += 1;
    }
}

#[test]
fn two_clients_converge_under_latency_jitter_and_loss() {
    let mut s = Session::new(LinkConditions::ISSUE_32, 32);
    let (mut pushes, mut last) = ([0u32; 2], 0.0);
    let mut errors = Vec::new();
    let mut next_sample = 2.0;
    s.run(9.0, |s| {
        push_now(s, &mut pushes, &mut last);
        if s.t >= next_sample {
            next_sample += 1.0 / 30.0;
            s.errors(&mut errors);
        }
    });
    let (mean, p99) = mean_p99(&mut errors);
    let (sent, lost) = s.net.counts();
    println!(
        "net session, 100 ms / 20 ms / 5%: {} samples, error mean {:.2} mm, p99 {:.2} mm; {sent} datagrams, {lost} lost; playout delays {:.0} / {:.0} ms",
        errors.len(),
        mean * 1000.0,
        p99 * 1000.0,
        s.clients[0].0.playout_delay() * 1000.0,
        s.clients[1].0.playout_delay() * 1000.0
    );
    assert!(
        lost > 0,
        "the network lost nothing: the test would prove nothing"
    );
    // The server's input playout delay follows the clients: above the 100 ms one-way
    // latency (seed 000 §Playout delay), below it plus the jitter, a step and slack.
    let delay = s.server.input_delay();
    assert!((0.1..0.2).contains(&delay), "input delay {delay} s");
    // Issue 32's target: the p99 visible error within 5 cm of the server's pose at the
    // client's presentation time.
    assert!(p99 < 0.05, "p99 error {p99} m");
    assert!(mean < 0.01, "mean error {mean} m");
    for (c, (client, _, _)) in s.clients.iter().enumerate() {
        // The clock estimate: the server's clock is the session's time, the client's is
        // offset by 1000 c + 0.37 s; the one-way delays are symmetric on average.
        let local = s.t + 1000.0 * (c as f64 + 1.0) + 0.37;
        let offset = client.clock().server_time(local).unwrap() - local;
        let truth = -(1000.0 * (c as f64 + 1.0) + 0.37);
        assert!(
            (offset - truth).abs() < 0.015,
            "client {}: offset {offset}, truth {truth}",
            c + 1
        );
        // Every push reached the server and was applied once, though 5% of packets were
        // lost: the history resends each frame.
        let stats = s.server.stats(c as u32 + 1).unwrap();
        assert_eq!(
            stats.actions_applied,
            u64::from(pushes[c]),
            "client {}",
            c + 1
        );
        assert!(pushes[c] >= 10);
        assert_eq!(stats.invalid, 0);
    }
    // Areas of interest: client 1 sees the box 45 m away, client 2 does not.
    let far = s.server.net_id(s.far).unwrap();
    assert!(s.clients[0].0.bodies().contains_key(&far));
    assert!(!s.clients[1].0.bodies().contains_key(&far));
    assert_eq!(s.clients[0].0.bodies().len(), s.server.world().body_count());
    assert_eq!(
        s.clients[1].0.bodies().len(),
        s.server.world().body_count() - 1
    );
}

#[test]
fn the_simulated_network_is_deterministic() {
    let run = || {
        let mut s = Session::new(LinkConditions::ISSUE_32, 5);
        s.run(2.0, |_| {});
        let (client, _, offset) = &s.clients[0];
        let body = *client.bodies().keys().nth(5).unwrap();
        let pose = client.pose(body, s.t + offset).unwrap();
        (
            s.net.counts(),
            s.net.bytes_sent(SERVER, 1),
            pose.translation.to_array().map(f32::to_bits),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn a_sleeping_world_costs_under_a_kilobyte_per_second() {
    let mut s = Session::new(LinkConditions::PERFECT, 1);
    s.run(12.0, |_| {});
    assert_eq!(
        s.server.world().awake_body_count(),
        0,
        "the scene should be asleep by now"
    );
    let before = s.server.stats(1).unwrap().snapshot_bytes;
    s.run(14.0, |_| {});
    let per_second = (s.server.stats(1).unwrap().snapshot_bytes - before) as f64 / 2.0;
    println!("net session, asleep: {per_second} bytes/s of snapshots per client");
    // 30 snapshots of a 10-byte header.
    assert!(per_second <= 30.0 * 10.0 + 1.0, "{per_second} bytes/s");
}

fn send(end: &mut SimEndpoint, msg: &ClientMessage) {
    end.send(SERVER, Channel::Unreliable, msg.encode());
}

#[test]
fn a_client_cannot_push_another_clients_body_and_bad_packets_change_nothing() {
    let mut s = Session::new(LinkConditions::PERFECT, 2);
    s.run(3.0, |_| {});
    let (victim_net, victim) = s.owned[1];
    let v_before = s.server.world().linear_velocity(victim).unwrap();
    // Client 1 forges an input on client 2's body, stamped with a good time.
    let forged = ClientMessage::Update {
        ack: 0,
        inputs: vec![InputFrame {
            seq: 1,
            time: s.t,
            actions: vec![Action {
                body: victim_net,
                impulse: Vec3::new(5000.0, 0.0, 0.0),
            }],
        }],
    };
    send(&mut s.clients[0].1, &forged);
    // ... and truncated, noise, and a NaN impulse on its own body.
    let good = ClientMessage::Update {
        ack: 0,
        inputs: vec![],
    }
    .encode();
    s.clients[0]
        .1
        .send(SERVER, Channel::Unreliable, good[..good.len() - 1].to_vec());
    s.clients[0]
        .1
        .send(SERVER, Channel::Unreliable, vec![0xff; 40]);
    let nan = ClientMessage::Update {
        ack: 0,
        inputs: vec![InputFrame {
            seq: 2,
            time: s.t,
            actions: vec![Action {
                body: s.owned[0].0,
                impulse: Vec3::new(f32::NAN, 0.0, 0.0),
            }],
        }],
    };
    send(&mut s.clients[0].1, &nan);
    let snapshots_before = s.clients[0].0.counts().snapshots;
    s.run(4.0, |_| {});
    let stats = s.server.stats(1).unwrap();
    assert_eq!(stats.invalid, 4);
    assert_eq!(stats.actions_applied, 0);
    let v_after = s.server.world().linear_velocity(victim).unwrap();
    assert!(
        (v_after - v_before).length() < 1e-3,
        "the victim moved: {v_before} -> {v_after}"
    );
    // The connection goes on: client 1 still receives snapshots.
    assert!(s.clients[0].0.counts().snapshots > snapshots_before + 20);
}

#[test]
fn a_flooding_client_is_limited_and_the_other_is_served() {
    let mut s = Session::new(LinkConditions::PERFECT, 3);
    s.run(2.0, |_| {});
    let (mut pushes, mut last) = ([0u32; 2], 0.0);
    s.run(5.0, |s| {
        push_now(s, &mut pushes, &mut last);
        // Client 1 sends 100 packets every 1/240 s: 24,000 per second.
        for _ in 0..100 {
            send(&mut s.clients[0].1, &ClientMessage::TimeReq { id: 1 });
        }
    });
    s.run(6.0, |_| {});
    let flooder = s.server.stats(1).unwrap();
    let other = s.server.stats(2).unwrap();
    println!(
        "flood: {} accepted, {} dropped unread",
        flooder.accepted, flooder.flooded
    );
    assert!(flooder.flooded > 60_000, "{flooder:?}");
    // Accepted at most the bucket's rate (120/s over 4 s) plus its burst.
    assert!(flooder.accepted <= 120 * 4 + 30 + 10, "{flooder:?}");
    assert_eq!(other.actions_applied, u64::from(pushes[1]));
    assert_eq!(other.flooded, 0);
}
