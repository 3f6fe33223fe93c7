//! Time over the simulated network: clock synchronization (seed 000 §Clock
//! synchronization) finds the server's clock and follows a drifting client clock, and
//! the server's input delay rises with jitter and falls when it goes, losing no input.

use std::collections::BTreeMap;

use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::Vec3;
use joule_physics::net::{
    AppliedInput, Client, ClockSync, Codec, LinkConditions, NetConfig, Server, ServerDesc,
    SimEndpoint, SimNetwork, pump_client, pump_server,
};
use joule_physics::shape::Shape;

use crate::common;

const SERVER: u32 = 0;

/// A ground and one sphere per client to push, far apart.
fn server(clients: u32) -> (Server, Vec<BodyId>) {
    let mut world = common::world(1);
    common::ground(&mut world, 0.5);
    let spheres = (0..clients)
        .map(|c| {
            world
                .create_body(&BodyDesc::dynamic(
                    Shape::sphere(0.5).unwrap(),
                    Vec3::new(-10.0 + 20.0 * c as f32, 0.5, 0.0),
                ))
                .unwrap()
        })
        .collect();
    let codec = Codec::new(NetConfig::default()).unwrap();
    (Server::new(world, codec, ServerDesc::default()), spheres)
}

/// A client whose clock reads `rate * t + offset` when the server's reads `t`.
struct Remote {
    client: Client,
    end: SimEndpoint,
    rate: f64,
    offset: f64,
}

impl Remote {
    fn local(&self, t: f64) -> f64 {
        self.rate * t + self.offset
    }
}

#[test]
fn clock_sync_finds_the_servers_clock_and_follows_a_drifting_client_clock() {
    let net = SimNetwork::new(LinkConditions::ISSUE_32, 7);
    let (mut server, _) = server(2);
    let codec = server.codec().clone();
    // Client 1's clock is 3.7 s ahead; client 2's 1000 s ahead and 0.1 % fast.
    let mut remotes: Vec<Remote> = [(1.0, 3.7), (1.001, 1000.0)]
        .into_iter()
        .enumerate()
        .map(|(i, (rate, offset))| {
            let c = i as u32 + 1;
            server.add_client(c, Vec3::ZERO, 100.0).unwrap();
            Remote {
                client: Client::new(codec.clone(), 900 + u64::from(c)),
                end: net.endpoint(c),
                rate,
                offset,
            }
        })
        .collect();
    let mut server_end = net.endpoint(SERVER);
    let mut worst = [0.0f64; 2];
    let mut sum = [0.0f64; 2];
    let mut samples = 0u32;
    let (mut t, mut next_check) = (0.0, 3.0);
    while t < 40.0 {
        t += 1.0 / 240.0;
        net.advance(t);
        pump_server(&mut server, &mut server_end, t);
        for r in &mut remotes {
            let local = r.local(t);
            pump_client(&mut r.client, &mut r.end, SERVER, local);
        }
        if t >= next_check {
            next_check += 0.1;
            samples += 1;
            for (i, r) in remotes.iter().enumerate() {
                // The server's clock is `t`: what the client believes it reads now.
                let estimate = r.client.clock().server_time(r.local(t)).unwrap();
                let error = (estimate - t).abs();
                if error > worst[i] && std::env::var("NET_DEBUG").is_ok() {
                    println!(
                        "client {}: error {:.2} ms at {t:.2} s",
                        i + 1,
                        error * 1000.0
                    );
                }
                worst[i] = worst[i].max(error);
                sum[i] += error;
            }
        }
    }
    for (i, r) in remotes.iter().enumerate() {
        let clock = r.client.clock();
        println!(
            "clock sync, 100 ms / 20 ms / 5%, client clock x{}: error mean {:.2} ms, worst {:.2} ms after 3 s; rtt {:.1} ms; drift {:.5}; {} rounds kept, {} dropped",
            r.rate,
            sum[i] / f64::from(samples) * 1000.0,
            worst[i] * 1000.0,
            clock.rtt().unwrap() * 1000.0,
            clock.drift(),
            clock.sample_count(),
            clock.rejected()
        );
        // Within a few ms of the truth from 3 s on, through 40 s: the drifting clock
        // is 37 ms off its start by then, and is followed. (A sample's own error is
        // half the difference of its two legs' jitter, up to 10 ms; the estimate
        // averages about 40 of them.)
        let mean = sum[i] / f64::from(samples);
        assert!(mean < 0.003, "client {}: mean error {mean} s", i + 1);
        assert!(
            worst[i] < 0.008,
            "client {}: worst error {} s",
            i + 1,
            worst[i]
        );
        // The round trip is two 100 ms legs plus up to 20 ms of jitter each.
        let rtt = clock.rtt().unwrap();
        assert!((0.2..0.25).contains(&rtt), "rtt {rtt}");
        assert_eq!(clock.sample_count(), joule_physics::net::clock::ROUNDS);
    }
    // The drift found: the server's clock gains -0.1 % on the fast client's.
    let drift = remotes[1].client.clock().drift();
    assert!(
        (drift + 0.001 / 1.001).abs() < 3.0e-4,
        "drift {drift}, truth {}",
        -0.001 / 1.001
    );
    assert!(remotes[0].client.clock().drift().abs() < 3.0e-4);
}

#[test]
fn a_clock_response_to_a_request_resent_under_a_new_id_is_ignored() {
    let mut clock = ClockSync::new(5);
    let first = clock.poll(0.0).unwrap();
    assert_eq!(clock.poll(0.5), None, "a request is outstanding");
    // Unanswered for over a second: resent under a new id.
    let again = clock.poll(1.1).unwrap();
    assert_ne!(first, again);
    // The late answer to the first is not taken, nor one never asked for.
    assert!(!clock.on_response(first, 50.0, 1.2));
    assert!(!clock.on_response(again ^ 1, 50.0, 1.2));
    assert!(clock.on_response(again, 50.0, 1.3));
    // The round's second request goes out at once; its answer completes the round.
    let second = clock.poll(1.3).unwrap();
    assert!(
        clock.server_time(1.3).is_none(),
        "half a round gives no estimate"
    );
    assert!(clock.on_response(second, 50.2, 1.5));
    // Server time 50.2 at the response, plus half of the 0.2 s round trip.
    let estimate = clock.server_time(1.5).unwrap();
    assert!((estimate - 50.3).abs() < 1e-9, "{estimate}");
    // A round whose server clock did not move as its round trips say is dropped.
    let a = clock.poll(1.5).unwrap();
    assert!(clock.on_response(a, 50.5, 1.7));
    let b = clock.poll(1.7).unwrap();
    assert!(clock.on_response(b, 80.0, 1.9));
    assert_eq!(clock.rejected(), 1);
    assert_eq!(clock.sample_count(), 1);
}

#[test]
fn the_input_delay_rises_with_jitter_and_falls_back_losing_no_input() {
    let calm = LinkConditions {
        latency: 0.05,
        jitter: 0.005,
        loss: 0.05,
        duplicate: 0.01,
        reorder: 0.02,
    };
    let rough = LinkConditions {
        jitter: 0.2,
        ..calm
    };
    let net = SimNetwork::new(calm, 11);
    let (mut server, spheres) = server(2);
    server.record_applied(true);
    let codec = server.codec().clone();
    let mut remotes: Vec<Remote> = (1..=2u32)
        .map(|c| {
            server.add_client(c, Vec3::ZERO, 100.0).unwrap();
            server.grant(c, spheres[c as usize - 1]).unwrap();
            Remote {
                client: Client::new(codec.clone(), 300 + u64::from(c)),
                end: net.endpoint(c),
                rate: 1.0,
                offset: 10.0 * f64::from(c),
            }
        })
        .collect();
    let mut server_end = net.endpoint(SERVER);
    let mut pushes = [0u64; 2];
    let mut applied: Vec<AppliedInput> = Vec::new();
    // The delay at the end of each phase, and its highest while rough.
    let (mut calm_delay, mut rough_peak, mut t) = (0.0, 0.0f64, 0.0f64);
    let mut delays = Vec::new();
    while t < 30.0 {
        t += 1.0 / 240.0;
        if (t - 8.0).abs() < 0.5 / 240.0 {
            calm_delay = server.input_delay();
            net.set_conditions(rough);
        }
        if (t - 16.0).abs() < 0.5 / 240.0 {
            net.set_conditions(calm);
        }
        net.advance(t);
        pump_server(&mut server, &mut server_end, t);
        applied.extend(server.take_applied());
        if (8.0..16.0).contains(&t) {
            rough_peak = rough_peak.max(server.input_delay());
        }
        if std::env::var("NET_DEBUG").is_ok() && delays.last() != Some(&server.input_delay()) {
            println!(
                "{t:.2} s: input delay {:.1} ms",
                server.input_delay() * 1000.0
            );
        }
        delays.push(server.input_delay());
        for (i, r) in remotes.iter_mut().enumerate() {
            // Every 1/60 s each client pushes its sphere a little, until 28 s, so
            // every update carries a new frame.
            if t < 28.0
                && ((t * 240.0).round() as u64).is_multiple_of(4)
                && r.client.clock().server_time(0.0).is_some()
                && let Some(&body) = r.client.owned().first()
            {
                let dir = if pushes[i].is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                };
                r.client.push(body, Vec3::new(dir, 0.0, 0.0)).unwrap();
                pushes[i] += 1;
            }
            let local = r.local(t);
            pump_client(&mut r.client, &mut r.end, SERVER, local);
        }
    }
    let end_delay = server.input_delay();
    // Reversals: a rise after a fall or a fall after a rise.
    let mut reversals = 0;
    let mut last_dir = 0i8;
    for w in delays.windows(2) {
        let dir = (w[1] > w[0]) as i8 - (w[1] < w[0]) as i8;
        if dir != 0 && last_dir != 0 && dir != last_dir {
            reversals += 1;
        }
        if dir != 0 {
            last_dir = dir;
        }
    }
    println!(
        "input delay: {:.0} ms calm, {:.0} ms at the rough peak, {:.0} ms calm again; {reversals} reversals; {} actions applied of {:?} pushed",
        calm_delay * 1000.0,
        rough_peak * 1000.0,
        end_delay * 1000.0,
        applied.len(),
        pushes
    );
    // Calm: a one-way 50 ms plus 5 ms of jitter and what loss adds (a frame lost
    // arrives with the next update, 1/30 s later).
    assert!((0.05..0.16).contains(&calm_delay), "calm {calm_delay}");
    // Rough: 100 ms of jitter more.
    assert!(rough_peak > calm_delay + 0.08, "rough {rough_peak}");
    // Calm again: back down, near where it was (a double loss now and then, which
    // the 4 s of lateness kept remember, holds it a step or two above).
    assert!(
        end_delay < rough_peak - 0.1,
        "end {end_delay}, peak {rough_peak}"
    );
    assert!(
        end_delay < calm_delay + 0.05,
        "end {end_delay}, calm {calm_delay}"
    );
    // The hysteresis: it moved one way, then the other, and did not flap.
    assert!(reversals <= 4, "the delay flapped: {reversals} reversals");
    // Every input applied exactly once, at its step, none late, in order.
    for c in 1..=2u32 {
        let stats = server.stats(c).unwrap();
        assert_eq!(stats.late_frames, 0, "client {c}");
        assert_eq!(stats.invalid, 0, "client {c}");
        assert_eq!(stats.actions_applied, pushes[c as usize - 1], "client {c}");
    }
    let mut seen = BTreeMap::new();
    let mut last_seq = [0u32; 2];
    for a in &applied {
        assert!(
            seen.insert((a.client, a.seq, a.index), a.tick).is_none(),
            "applied twice: {a:?}"
        );
        // Its step: the first whose start time is at or after its scheduled time.
        let start = f64::from(a.tick) / 60.0;
        assert!(a.at <= start && a.at > start - 1.0 / 60.0, "{a:?}");
        // Scheduled at least the least input delay after its time stamp.
        assert!(a.at >= a.time + ServerDesc::default().input_delay, "{a:?}");
        let last = &mut last_seq[a.client as usize - 1];
        assert!(a.seq >= *last, "out of order: {a:?}");
        *last = a.seq;
    }
    assert_eq!(seen.len() as u64, pushes[0] + pushes[1]);
    assert!(pushes.iter().all(|&p| p > 1000), "{pushes:?}");
}
