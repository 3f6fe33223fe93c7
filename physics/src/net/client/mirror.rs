//! The client's reliable half: world messages (spawns, despawns, joints) checked whole and
//! applied to the mirror world, and shape definitions assembled from their parts.

use super::*;

impl Client {
    /// Whether a world message applies whole: every spawn's shape known and its net id
    /// free (or freed by the message's despawns) or that of a body in view with the
    /// same shape and motion (an update of its friction, restitution and material), every joint's bodies in view once the
    /// message is applied and its net id free, and no shape a spawn's motion refuses
    /// (a mesh, heightfield or half-space on a moving body: the mirror's body would be
    /// kinematic, and half-spaces are static only).
    pub(super) fn world_message_fits(
        &self,
        spawns: &[Spawn],
        despawns: &[u32],
        joints: &[JointSpawn],
        joint_despawns: &[u32],
    ) -> bool {
        let gone: BTreeSet<u32> = despawns.iter().copied().collect();
        let spawned: BTreeSet<u32> = spawns.iter().map(|s| s.net_id).collect();
        let in_view = |id: u32| {
            spawned.contains(&id) || (self.bodies.contains_key(&id) && !gone.contains(&id))
        };
        let spawns_ok = spawns.iter().all(|s| {
            // A spawn of a body in view with its shape and motion updates its surface.
            let update = !gone.contains(&s.net_id)
                && self
                    .bodies
                    .get(&s.net_id)
                    .is_some_and(|b| b.shape_id == s.shape_id && b.motion == s.motion);
            let free = update || !self.bodies.contains_key(&s.net_id) || gone.contains(&s.net_id);
            let shape_ok = self.shapes.get(&s.shape_id).is_some_and(|(_, shape)| {
                s.motion == NetMotion::Static || !matches!(shape, Shape::HalfSpace(_))
            });
            free && shape_ok
        });
        let joint_gone: BTreeSet<u32> = joint_despawns.iter().copied().collect();
        let joints_ok = joints.iter().all(|j| {
            (!self.joints.contains_key(&j.net_id) || joint_gone.contains(&j.net_id))
                && j.body_a.is_none_or(in_view)
                && in_view(j.body_b)
        });
        spawns_ok && joints_ok
    }

    /// Applies a world message [`world_message_fits`](Self::world_message_fits) passed.
    pub(super) fn apply_world(
        &mut self,
        spawns: Vec<Spawn>,
        despawns: &[u32],
        joints: Vec<JointSpawn>,
        joint_despawns: &[u32],
    ) {
        for id in joint_despawns {
            if let Some(j) = self.joints.remove(id)
                && self.world.contains_joint(j)
            {
                self.world.remove_joint(j).expect("checked live just above");
            }
        }
        for id in despawns {
            if let Some(b) = self.bodies.remove(id) {
                self.net_ids.remove(&b.body);
                self.received.remove(id);
                // Its joints go with it.
                self.world
                    .remove_body(b.body)
                    .expect("mirror bodies are live");
            }
        }
        let world = &self.world;
        self.joints.retain(|_, j| world.contains_joint(*j));
        for s in spawns {
            if let Some(b) = self.bodies.get(&s.net_id) {
                // A surface update (checked in `world_message_fits`).
                let body = b.body;
                // Restitution first checked whole (the decoder bounds it by
                // MAX_SURFACE, the world by 1), so an update applies entirely or not at all.
                if !(0.0..=1.0).contains(&s.restitution) {
                    self.counts.invalid += 1;
                    continue;
                }
                let set = self
                    .world
                    .set_friction(body, s.friction)
                    .and_then(|()| self.world.set_restitution(body, s.restitution))
                    .and_then(|()| self.world.set_material(body, MaterialId(s.material)));
                if set.is_err() {
                    self.counts.invalid += 1;
                }
                continue;
            }
            let (_, shape) = &self.shapes[&s.shape_id];
            let (position, rotation) = match s.pose {
                Some(pose) => (pose.position(), pose.rotation),
                None => (self.codec.position(&s.state), self.codec.rotation(&s.state)),
            };
            let desc = match s.motion {
                NetMotion::Static => BodyDesc::fixed(shape.clone(), position),
                NetMotion::Dynamic | NetMotion::Kinematic => {
                    BodyDesc::kinematic(shape.clone(), position)
                }
            }
            .rotation(rotation)
            .friction(s.friction)
            .restitution(s.restitution)
            .material(MaterialId(s.material));
            match self.world.create_body(&desc) {
                Ok(body) => {
                    self.net_ids.insert(body, s.net_id);
                    self.bodies.insert(
                        s.net_id,
                        MirrorBody {
                            body,
                            shape_id: s.shape_id,
                            motion: s.motion,
                            spawn: s.state,
                        },
                    );
                }
                // Checked before (shape, motion, finite pose): not reached.
                Err(_) => self.counts.invalid += 1,
            }
        }
        for j in joints {
            let body = |id: u32| self.bodies[&id].body;
            let mut desc = JointDesc::new(
                j.kind,
                j.body_a.map(body),
                body(j.body_b),
                j.frame_a,
                j.frame_b,
            );
            desc.collide_connected = j.collide_connected;
            desc.break_force = j.break_force;
            desc.break_torque = j.break_torque;
            match self.world.create_joint(&desc) {
                Ok(id) => {
                    self.world
                        .set_joint_enabled(id, false)
                        .expect("created just above");
                    self.joints.insert(j.net_id, id);
                }
                // The decoder checked the kind and frames: not reached.
                Err(_) => self.counts.invalid += 1,
            }
        }
    }

    /// Takes a part of a shape definition; the last part decodes and builds the shape.
    /// Parts come in order on the reliable channel: one out of order, or of another
    /// length than the first said, drops the definition.
    pub(super) fn take_shape_part(
        &mut self,
        shape_id: u32,
        total: u32,
        offset: u32,
        data: Vec<u8>,
    ) {
        let mut assembly = match self.assembly.take() {
            None if offset == 0 => Assembly {
                shape_id,
                total,
                data: Vec::new(),
            },
            Some(a)
                if a.shape_id == shape_id
                    && a.total == total
                    && offset as usize == a.data.len() =>
            {
                a
            }
            _ => {
                self.counts.invalid += 1;
                self.counts.invalid_shapes += 1;
                return;
            }
        };
        // The decoder bounds each part by `total - offset`, so this never passes `total`
        // (at most MAX_SHAPE_BYTES).
        assembly.data.extend_from_slice(&data);
        if assembly.data.len() < total as usize {
            self.assembly = Some(assembly);
            return;
        }
        match ShapeDef::decode(&assembly.data).map(|d| {
            let shape = d.to_shape();
            (d, shape)
        }) {
            Ok((def, Ok(shape))) => {
                self.shapes.insert(shape_id, (def, shape));
            }
            _ => {
                self.counts.invalid += 1;
                self.counts.invalid_shapes += 1;
            }
        }
    }
}
