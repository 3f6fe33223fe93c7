//! A joint disabled or enabled again on the server: the client's view of the joints
//! follows on the reliable channel (the client holds the server's enabled joints; a
//! broken joint reads as disabled, `World::is_joint_enabled`, and takes the same path).

use joule_physics::body::BodyDesc;
use joule_physics::joint::{JointDesc, JointKind};
use joule_physics::math::{Isometry, Vec3};
use joule_physics::net::{
    Client, Codec, LinkConditions, NetConfig, Server, ServerDesc, SimNetwork, pump_client,
    pump_server,
};
use joule_physics::shape::Shape;
use joule_physics::world::WorldDesc;

use crate::common;

#[test]
fn a_joint_disabled_or_enabled_again_on_the_server_follows_on_the_client() {
    let mut world = common::world_with(WorldDesc::default(), 1);
    let ball = Shape::sphere(0.25).unwrap();
    // Two balls, each hanging from the world by a ball joint 1 m above it.
    let mut hang = |x: f32, break_force: f32| {
        let b = world
            .create_body(&BodyDesc::dynamic(ball.clone(), Vec3::new(x, 2.0, 0.0)))
            .unwrap();
        let mut desc = JointDesc::new(
            JointKind::Ball,
            None,
            b,
            Isometry::from_translation(Vec3::new(x, 3.0, 0.0)),
            Isometry::from_translation(Vec3::new(0.0, 1.0, 0.0)),
        );
        desc.break_force = break_force;
        (b, world.create_joint(&desc).unwrap())
    };
    let (_, held) = hang(0.0, f32::INFINITY);
    let (_, other) = hang(3.0, f32::INFINITY);
    let codec = Codec::new(NetConfig::default()).unwrap();
    let mut server = Server::new(world, codec.clone(), ServerDesc::default());
    server.add_client(1, Vec3::ZERO, 100.0).unwrap();
    let net = SimNetwork::new(LinkConditions::ISSUE_32, 13);
    let (mut server_end, mut client_end) = (net.endpoint(0), net.endpoint(1));
    let mut client = Client::new(codec, 3);
    let mut t = 0.0f64;
    let mut run = |server: &mut Server, client: &mut Client, until: f64| {
        while t < until {
            t += 1.0 / 240.0;
            net.advance(t);
            pump_server(server, &mut server_end, t);
            pump_client(client, &mut client_end, 0, t);
        }
    };
    run(&mut server, &mut client, 1.5);
    let held_id = server.joint_net_id(held).unwrap();
    let other_id = server.joint_net_id(other).unwrap();
    let in_view = |c: &Client| c.joints().keys().copied().collect::<Vec<_>>();
    let mut both = vec![held_id, other_id];
    both.sort_unstable();
    assert_eq!(in_view(&client), both);
    // Disabled: it leaves the client's view.
    server.world_mut().set_joint_enabled(held, false).unwrap();
    run(&mut server, &mut client, 2.5);
    assert_eq!(in_view(&client), vec![other_id]);
    // Enabled again: back, under the same net id.
    server.world_mut().set_joint_enabled(held, true).unwrap();
    run(&mut server, &mut client, 3.5);
    assert_eq!(in_view(&client), both);
    assert_eq!(client.counts().invalid, 0);
}
