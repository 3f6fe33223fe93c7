//! A body's surface changed after its spawn (friction, restitution, material) reaches a
//! client on the reliable channel.

use joule_physics::body::BodyDesc;
use joule_physics::material::MaterialId;
use joule_physics::math::Vec3;
use joule_physics::net::{
    Client, Codec, LinkConditions, NetConfig, Server, ServerDesc, SimNetwork, pump_client,
    pump_server,
};
use joule_physics::shape::Shape;
use joule_physics::world::WorldDesc;

use crate::common;

#[test]
fn a_surface_changed_after_spawn_reaches_the_client_and_nothing_else_changes() {
    let mut world = common::world_with(WorldDesc::default(), 1);
    let ground = world
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(10.0, 0.5, 10.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        ))
        .unwrap();
    let ball = world
        .create_body(
            &BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::new(0.0, 2.0, 0.0))
                .friction(0.3)
                .restitution(0.1),
        )
        .unwrap();
    let codec = Codec::new(NetConfig::default()).unwrap();
    let mut server = Server::new(world, codec.clone(), ServerDesc::default());
    server.add_client(1, Vec3::ZERO, 100.0).unwrap();
    let net = SimNetwork::new(LinkConditions::ISSUE_32, 11);
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
    let (ball_id, ground_id) = (server.net_id(ball).unwrap(), server.net_id(ground).unwrap());
    let surface = |client: &Client, id: u32| {
        let b = client.world().body(client.bodies()[&id].body).unwrap();
        (b.friction(), b.restitution(), b.material())
    };
    assert_eq!(surface(&client, ball_id), (0.3, 0.1, MaterialId(0)));
    let mirror_ball = client.bodies()[&ball_id].body;
    let w = server.world_mut();
    w.set_friction(ball, 0.9).unwrap();
    w.set_restitution(ball, 0.6).unwrap();
    w.set_material(ball, MaterialId(3)).unwrap();
    w.set_friction(ground, 0.05).unwrap();
    run(&mut server, &mut client, 3.0);
    // Exactly the server's values (they travel as f32 bits), on the same mirror body.
    assert_eq!(surface(&client, ball_id), (0.9, 0.6, MaterialId(3)));
    assert_eq!(surface(&client, ground_id).0, 0.05);
    assert_eq!(client.bodies()[&ball_id].body, mirror_ball);
    assert_eq!(client.counts().invalid, 0);
    assert_eq!(client.bodies().len(), 2);
}
