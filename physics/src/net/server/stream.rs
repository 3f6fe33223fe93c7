//! The server's outgoing half: net ids for new bodies and joints, and each client's
//! reliable changes and snapshot, chosen by relevance within its budget (see the
//! [module header](super)).

use super::*;

impl Server {
    /// Gives net ids to new bodies and joints and forgets removed ones.
    pub(super) fn sync_replication(&mut self) {
        self.replicated.retain(|_, r| self.world.contains(r.body));
        self.net_of.retain(|b, _| self.world.contains(*b));
        // Surfaces changed since a body's spawn.
        for rep in self.replicated.values_mut() {
            let body = self.world.body(rep.body).expect("retained live just above");
            rep.friction = body.friction();
            rep.restitution = body.restitution();
            rep.material = body.material().0;
        }
        for body in self.world.bodies() {
            if self.net_of.contains_key(&body.id()) {
                continue;
            }
            let def = ShapeDef::from_shape(body.shape());
            let shape_id = match self.shapes.iter().position(|(s, _)| *s == def) {
                Some(i) => i as u32 + 1,
                None => {
                    let bytes = def.encode();
                    self.shapes.push((def, bytes));
                    self.shapes.len() as u32
                }
            };
            let motion = match body.motion_type() {
                MotionType::Fixed => NetMotion::Static,
                MotionType::Kinematic => NetMotion::Kinematic,
                MotionType::Dynamic => NetMotion::Dynamic,
            };
            let net_id = self.next_net_id;
            self.next_net_id += 1;
            self.net_of.insert(body.id(), net_id);
            self.replicated.insert(
                net_id,
                Replicated {
                    body: body.id(),
                    shape_id,
                    motion,
                    friction: body.friction(),
                    restitution: body.restitution(),
                    material: body.material().0,
                },
            );
        }
        // Joints: forget removed ones and those whose description changed (they come
        // back under a new net id below), then map the new ones.
        let world = &self.world;
        self.joints
            .retain(|_, j| world.joint_desc(j.id).is_ok_and(|d| d == j.desc));
        let live: BTreeSet<JointId> = self.joints.values().map(|j| j.id).collect();
        self.joint_net.retain(|id, _| live.contains(id));
        for id in self.world.joint_ids() {
            if self.joint_net.contains_key(&id) {
                continue;
            }
            let desc = self.world.joint_desc(id).expect("listed live");
            let body_a = match desc.body_a {
                Some(a) => Some(self.net_of[&a]),
                None => None,
            };
            let net_id = self.next_joint_id;
            self.next_joint_id += 1;
            self.joint_net.insert(id, net_id);
            self.joints.insert(
                net_id,
                ReplicatedJoint {
                    id,
                    desc,
                    spawn: JointSpawn {
                        net_id,
                        body_a,
                        body_b: self.net_of[&desc.body_b],
                        kind: desc.kind,
                        frame_a: desc.frame_a,
                        frame_b: desc.frame_b,
                        collide_connected: desc.collide_connected,
                        break_force: desc.break_force,
                        break_torque: desc.break_torque,
                    },
                },
            );
        }
    }

    pub(super) fn send_snapshots(&mut self) {
        // Every replicated body's state, position and island, in net id order.
        let ids: Vec<u32> = self.replicated.keys().copied().collect();
        let mut states = Vec::with_capacity(ids.len());
        for &net_id in &ids {
            let rep = self.replicated[&net_id];
            let b = self
                .world
                .body(rep.body)
                .expect("replication was synced this step");
            let state = self.codec.quantize(
                b.position(),
                b.rotation(),
                b.linear_velocity(),
                b.angular_velocity(),
            );
            states.push((state, b.position()));
        }
        let mut parent: Vec<u32> = (0..ids.len() as u32).collect();
        // Two replicated bodies that touch or are jointed move as one (a static one joins
        // nothing: it would merge every island resting on the ground).
        let mut join = |a: u32, b: u32| {
            let (ra, rb) = (self.replicated[&a].motion, self.replicated[&b].motion);
            if ra == NetMotion::Static || rb == NetMotion::Static {
                return;
            }
            let ia = ids.binary_search(&a).expect("replicated") as u32;
            let ib = ids.binary_search(&b).expect("replicated") as u32;
            let (x, y) = (find(&mut parent, ia), find(&mut parent, ib));
            if x != y {
                parent[x.max(y) as usize] = x.min(y);
            }
        };
        for c in self.world.contacts() {
            if let (Some(&a), Some(&b)) = (self.net_of.get(&c.body_a), self.net_of.get(&c.body_b)) {
                join(a, b);
            }
        }
        for j in self.joints.values() {
            if let Some(a) = j.spawn.body_a {
                join(a, j.spawn.body_b);
            }
        }
        let roots: Vec<u32> = (0..ids.len() as u32)
            .map(|i| find(&mut parent, i))
            .collect();
        let clients: Vec<ClientId> = self.clients.keys().copied().collect();
        for client in clients {
            self.send_to(client, &ids, &states, &roots);
        }
    }

    fn send_to(
        &mut self,
        client: ClientId,
        ids: &[u32],
        states: &[(BodyState, Vec3)],
        roots: &[u32],
    ) {
        let codec = &self.codec;
        let tick = self.tick;
        let slot = self.clients.get_mut(&client).expect("a connected client");
        // Islands in the area: an island is in when any of its bodies is.
        let n = ids.len();
        let mut island_distance = vec![f32::INFINITY; n];
        for i in 0..n {
            let d = states[i].1.distance(slot.point);
            let r = roots[i] as usize;
            island_distance[r] = island_distance[r].min(d);
        }
        let inside = |i: usize| island_distance[roots[i] as usize] <= slot.radius;
        // Reliable: shapes, spawns, despawns, joints, ownership.
        let mut spawns = Vec::new();
        let mut shapes = Vec::new();
        let mut area = BTreeSet::new();
        for i in 0..n {
            if !inside(i) {
                continue;
            }
            area.insert(ids[i]);
            let rep = self.replicated[&ids[i]];
            let surface = (
                rep.friction.to_bits(),
                rep.restitution.to_bits(),
                rep.material,
            );
            // A body in view whose surface changed is spawned again under its net id,
            // which the client takes as a surface update.
            let resend = slot.known.contains(&ids[i])
                && slot.surfaces.get(&ids[i]).is_some_and(|s| *s != surface);
            if !slot.known.contains(&ids[i]) || resend {
                slot.surfaces.insert(ids[i], surface);
                if slot.shapes_sent.insert(rep.shape_id) {
                    shapes.push(rep.shape_id);
                }
                spawns.push(Spawn {
                    net_id: ids[i],
                    shape_id: rep.shape_id,
                    motion: rep.motion,
                    state: states[i].0,
                    friction: rep.friction,
                    restitution: rep.restitution,
                    material: rep.material,
                    pose: (rep.motion == NetMotion::Static).then(|| {
                        self.world
                            .transform(rep.body)
                            .expect("replication was synced this step")
                    }),
                });
            }
        }
        let mut despawns: Vec<u32> = slot.known.difference(&area).copied().collect();
        // Joints in view: enabled (a disabled or broken joint leaves the client's view
        // and comes back under its net id once enabled again), with both bodies in the
        // area (body A may be the world).
        let world = &self.world;
        let joints_in: BTreeSet<u32> = self
            .joints
            .iter()
            .filter(|(_, j)| {
                world.is_joint_enabled(j.id).unwrap_or(false)
                    && j.spawn.body_a.is_none_or(|a| area.contains(&a))
                    && area.contains(&j.spawn.body_b)
            })
            .map(|(&id, _)| id)
            .collect();
        let mut joint_spawns: Vec<JointSpawn> = joints_in
            .difference(&slot.joints_known)
            .map(|id| self.joints[id].spawn)
            .collect();
        let mut joint_despawns: Vec<u32> =
            slot.joints_known.difference(&joints_in).copied().collect();
        slot.joints_known = joints_in;
        shapes.sort_unstable();
        let mut owned = std::mem::take(&mut slot.owned_unsent);
        owned.sort_unstable();
        // Shapes first, each in parts, before the spawns that use them; the reliable
        // channel keeps the order.
        for id in shapes {
            let bytes = &self.shapes[id as usize - 1].1;
            for (k, part) in bytes.chunks(SHAPE_PART_BYTES).enumerate() {
                let msg = ServerMessage::ShapePart {
                    shape_id: id,
                    total: bytes.len() as u32,
                    offset: (k * SHAPE_PART_BYTES) as u32,
                    data: part.to_vec(),
                }
                .encode(codec);
                slot.stats.world_bytes += msg.len() as u64;
                self.outgoing.push((client, Channel::Reliable, msg));
            }
        }
        // In messages of at most WORLD_CHUNK spawns, despawns and joints each, so none
        // comes near the packet limit; joints leave in the first messages (before their
        // bodies) and enter once every spawn is out (after their bodies).
        while !(spawns.is_empty()
            && despawns.is_empty()
            && owned.is_empty()
            && joint_spawns.is_empty()
            && joint_despawns.is_empty())
        {
            let rest_spawns = spawns.split_off(spawns.len().min(WORLD_CHUNK));
            let rest_despawns = despawns.split_off(despawns.len().min(WORLD_CHUNK));
            let rest_joint_despawns =
                joint_despawns.split_off(joint_despawns.len().min(WORLD_CHUNK));
            let joints = if rest_spawns.is_empty() {
                let rest = joint_spawns.split_off(joint_spawns.len().min(WORLD_CHUNK));
                std::mem::replace(&mut joint_spawns, rest)
            } else {
                Vec::new()
            };
            let bytes = ServerMessage::World {
                spawns: std::mem::replace(&mut spawns, rest_spawns),
                despawns: std::mem::replace(&mut despawns, rest_despawns),
                owned: std::mem::take(&mut owned),
                joints,
                joint_despawns: std::mem::replace(&mut joint_despawns, rest_joint_despawns),
            }
            .encode(codec);
            slot.stats.world_bytes += bytes.len() as u64;
            self.outgoing.push((client, Channel::Reliable, bytes));
        }
        slot.surfaces.retain(|id, _| area.contains(id));
        slot.known = area;
        // The snapshot: what changed since the acknowledged baseline, by relevance.
        let baseline = slot
            .acked
            .and_then(|t| slot.sent.iter().find(|(s, _)| s.tick == t));
        // A body's state in the baseline and the tick that state was taken at.
        let in_baseline = |id: u32| -> Option<(&BodyState, u32)> {
            let (b, fresh) = baseline?;
            let i = b.bodies.binary_search_by_key(&id, |&(n, _)| n).ok()?;
            Some((&b.bodies[i].1, fresh[i]))
        };
        let moving = |i: usize| self.replicated[&ids[i]].motion != NetMotion::Static;
        // Each changed body's relevance and cost, by index; each island's relevance
        // (its most relevant body's) and cost.
        let mut changed: Vec<Option<(f32, u64)>> = vec![None; n];
        let mut islands: BTreeMap<u32, (f32, u64)> = BTreeMap::new();
        for i in 0..n {
            if !inside(i) || !moving(i) {
                continue;
            }
            let base = in_baseline(ids[i]);
            if base.is_some_and(|(b, _)| *b == states[i].0) {
                continue;
            }
            // Staleness counts from the state the client is known to have: an island
            // sent but not yet acknowledged stays as urgent, so it goes again in each
            // snapshot until an acknowledged one holds it, and the budget is spent on
            // finishing what was started rather than on starting more.
            let age = tick - base.map_or(0, |(_, fresh)| fresh).min(tick);
            // How far the client's copy is from the truth: what it shows if this body
            // is left out (a body it has no baseline for counts as a metre).
            let change = base.map_or(1.0, |(b, _)| {
                length((codec.position(b) - states[i].1).into())
            });
            let distance = length((states[i].1 - slot.point).into());
            let relevance =
                (RELEVANCE_FLOOR + change) * (1.0 + age as f32 / AGE_TICKS) / (1.0 + distance);
            let cost =
                crate::net::snapshot::body_cost_bits(codec, base.map(|(b, _)| b), &states[i].0);
            changed[i] = Some((relevance, cost));
            let e = islands.entry(roots[i]).or_insert((0.0, 0));
            e.0 = e.0.max(relevance);
            e.1 += cost;
        }
        let mut order: Vec<(u32, f32, u64)> =
            islands.into_iter().map(|(r, (s, c))| (r, s, c)).collect();
        order.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        let rate = codec.config().tick_rate as f32 / codec.config().snapshot_interval as f32;
        // The budget, and never more than half the packet limit.
        let per_snapshot = ((self.desc.bandwidth as f32 / rate * 8.0) as i64)
            .min(crate::net::MAX_PACKET_BYTES as i64 * 4);
        // What the last snapshots over- or under-spent (the cost estimate leaves out the
        // id lists and the header) is taken from or added to this one.
        let allowance = per_snapshot + slot.carry;
        let mut budget = allowance - 128;
        let mut chosen = BTreeSet::new();
        // An island larger than what is left of the budget (rain4k's pile is one island
        // of thousands) is sent in part, its most relevant bodies first.
        let mut partial = BTreeSet::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut member_of: BTreeMap<u32, usize> = BTreeMap::new();
        for i in 0..n {
            if changed[i].is_some() {
                let k = *member_of.entry(roots[i]).or_insert_with(|| {
                    members.push(Vec::new());
                    members.len() - 1
                });
                members[k].push(i);
            }
        }
        for &(root, _, cost) in &order {
            if budget < SMALLEST_BODY_BITS {
                break;
            }
            if budget >= cost as i64 {
                budget -= cost as i64;
                chosen.insert(root);
                continue;
            }
            let mut list: Vec<(f32, u64, usize)> = members[member_of[&root]]
                .iter()
                .map(|&i| {
                    let (r, c) = changed[i].expect("a member is changed");
                    (r, c, i)
                })
                .collect();
            list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
            for (_, cost, i) in list {
                if budget >= cost as i64 {
                    budget -= cost as i64;
                    partial.insert(i);
                }
            }
        }
        let mut bodies = Vec::new();
        let mut fresh = Vec::new();
        for i in 0..n {
            if !inside(i) || !moving(i) {
                continue;
            }
            if chosen.contains(&roots[i]) || partial.contains(&i) {
                bodies.push((ids[i], states[i].0));
                fresh.push(tick);
            } else if let Some((b, f)) = in_baseline(ids[i]) {
                bodies.push((ids[i], *b));
                fresh.push(f);
            }
        }
        let next = SnapshotState { tick, bodies };
        let bytes = ServerMessage::encode_snapshot(codec, &next, baseline.map(|(b, _)| b));
        slot.carry = (allowance - 8 * bytes.len() as i64).clamp(-per_snapshot, per_snapshot);
        slot.stats.snapshot_bytes += bytes.len() as u64;
        slot.stats.snapshots += 1;
        self.outgoing.push((client, Channel::Unreliable, bytes));
        slot.sent.push_back((next, fresh));
        while slot.sent.len() > self.desc.baselines {
            let (old, _) = slot.sent.pop_front().expect("longer than the limit");
            if slot.acked == Some(old.tick) {
                slot.acked = None;
            }
        }
    }
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        parent[i as usize] = parent[parent[i as usize] as usize];
        i = parent[i as usize];
    }
    i
}
