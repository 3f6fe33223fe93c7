//! The kinematic character controller: its state and one update (see the module
//! docs of [`character`](crate::character) for the stages).

use arrayvec::ArrayVec;

use crate::body::{BodyId, MotionType};
use crate::character::desc::{
    CharacterDesc, CharacterError, CharacterGround, CharacterInput, CharacterPush, GroundState,
    check, check_vector,
};
use crate::character::slide::{self, MAX_PLANES, Plane, horizontal};
use crate::collision::query::{QueryFilter, SceneQuery};
use crate::collision::shape_query::{ShapeCastHit, ShapeCastOptions, ShapeContact};
use crate::math::{Isometry, Quat, Vec3, Vec3A};
use crate::world::World;

/// Hits remembered per update (for pushing): more than the slide's sweeps.
const MAX_HITS: usize = 8;

/// Contacts the scratch holds from the start (a capsule in a mesh corner touches a few
/// triangles, up to four points each); it grows past that once, if ever.
const CONTACTS_RESERVED: usize = 64;

/// Moves shorter than this (m) are not swept.
const MIN_MOVE: f32 = 1e-5;

/// A stepped move is kept only when it lands at least this much (m) higher.
const MIN_STEP_RISE: f32 = 1e-3;

/// How far behind a steep ground contact the ledge ray starts (m).
const LEDGE_OFFSET: f32 = 0.02;

/// Contacts facing up by less than this (cosine to `up`) are walls, never ground.
const MIN_SUPPORT_COS: f32 = 0.05;

/// A kinematic character (see the [module docs](crate::character)).
///
/// ```
/// use joule_physics::prelude::*;
/// use joule_physics::character::{CharacterController, CharacterDesc, CharacterInput, GroundState};
///
/// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
/// world.create_body(&BodyDesc::fixed(Shape::half_space(Vec3::Y, 0.0)?, Vec3::ZERO))?;
/// let mut player = CharacterController::new(CharacterDesc::default(), Vec3::new(0.0, 1.0, 0.0))?;
/// let walk = CharacterInput { velocity: Vec3::new(2.0, 0.0, 0.0), ..CharacterInput::default() };
/// for _ in 0..60 {
///     world.step(1.0 / 60.0);
///     player.update(&mut world, 1.0 / 60.0, &walk, &QueryFilter::default())?;
/// }
/// assert_eq!(player.ground().state, GroundState::Grounded);
/// // Standing on the ground a skin above it (half height 0.6 + radius 0.3 + 0.02).
/// assert!((player.position().y - 0.92).abs() < 1e-3);
/// assert!(player.position().x > 1.9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct CharacterController {
    desc: CharacterDesc,
    up: Vec3,
    rotation: Quat,
    cos_max_slope: f32,
    position: Vec3,
    velocity: Vec3,
    vertical_speed: f32,
    ground: CharacterGround,
    /// The body stood on at the end of the last update and its pose then.
    platform: Option<(BodyId, Isometry)>,
    contacts: Vec<ShapeContact>,
    hits: ArrayVec<ShapeCastHit, MAX_HITS>,
    pushes: ArrayVec<CharacterPush, MAX_HITS>,
    /// Whether the last move hit something above while rising.
    hit_ceiling: bool,
    /// The gap to the ground contact the last probe chose, and its normal, when it is
    /// walkable by its own normal (not a ledge): what [`Self::settle`] evens out.
    ground_gap: Option<(f32, Vec3)>,
    /// The kinematic body that stands for the character in the world, if any.
    body: Option<BodyId>,
    /// The last update's time step (to move `body` over the next step).
    last_dt: f32,
}

/// A query filter that also skips `skip`.
struct Skipping<'a, 'f> {
    base: &'a QueryFilter<'f>,
    skip: Option<BodyId>,
}

impl Skipping<'_, '_> {
    fn accepts(&self, id: BodyId) -> bool {
        self.skip != Some(id) && self.base.predicate.is_none_or(|p| p(id))
    }
}

impl CharacterController {
    /// A character with `desc` whose shape's centre is at `position`.
    pub fn new(desc: CharacterDesc, position: Vec3) -> Result<Self, CharacterError> {
        desc.validate()?;
        check_vector(position, "position")?;
        let up = desc.up.normalize();
        let (_, cos) = crate::math::sin_cos(desc.max_slope);
        Ok(CharacterController {
            rotation: Quat::from_rotation_arc(Vec3::Y, up),
            up,
            cos_max_slope: cos,
            position,
            velocity: Vec3::ZERO,
            vertical_speed: 0.0,
            ground: CharacterGround {
                normal: up,
                ..CharacterGround::default()
            },
            platform: None,
            contacts: Vec::with_capacity(CONTACTS_RESERVED),
            hits: ArrayVec::new(),
            pushes: ArrayVec::new(),
            hit_ceiling: false,
            ground_gap: None,
            body: None,
            last_dt: 0.0,
            desc,
        })
    }

    /// The settings.
    #[must_use]
    pub fn desc(&self) -> &CharacterDesc {
        &self.desc
    }

    /// The shape's centre.
    #[must_use]
    pub fn position(&self) -> Vec3 {
        self.position
    }

    /// The shape's pose (upright along `up`).
    #[must_use]
    pub fn pose(&self) -> Isometry {
        Isometry::new(Vec3A::from(self.position), self.rotation)
    }

    /// The velocity of the last update: its displacement over its time step (platform
    /// motion included).
    #[must_use]
    pub fn velocity(&self) -> Vec3 {
        self.velocity
    }

    /// The ground after the last update.
    #[must_use]
    pub fn ground(&self) -> &CharacterGround {
        &self.ground
    }

    /// The impulses the last update gave (or, after
    /// [`plan`](CharacterController::plan), will give) dynamic bodies.
    #[must_use]
    pub fn pushes(&self) -> &[CharacterPush] {
        &self.pushes
    }

    /// Moves the character to `position` (a teleport: no sweep, the ground is forgotten,
    /// the vertical speed reset).
    pub fn set_position(&mut self, position: Vec3) -> Result<(), CharacterError> {
        check_vector(position, "position")?;
        self.position = position;
        self.platform = None;
        self.vertical_speed = 0.0;
        self.ground = CharacterGround {
            normal: self.up,
            ..CharacterGround::default()
        };
        Ok(())
    }

    /// One update of `dt` seconds with `input`, against the bodies `filter` accepts, then
    /// the pushes applied to the world (see the [module docs](crate::character)). Call it
    /// after [`World::step`], once per step.
    pub fn update(
        &mut self,
        world: &mut World,
        dt: f32,
        input: &CharacterInput,
        filter: &QueryFilter,
    ) -> Result<(), CharacterError> {
        self.plan(world, dt, input, filter)?;
        self.apply_pushes(world);
        Ok(())
    }

    /// The update without changing the world: moves the character and records the
    /// impulses for dynamic bodies in [`pushes`](CharacterController::pushes), for
    /// [`apply_pushes`](CharacterController::apply_pushes) to apply later (what
    /// [`update_characters`](crate::character::update_characters) does in parallel).
    pub fn plan(
        &mut self,
        world: &World,
        dt: f32,
        input: &CharacterInput,
        filter: &QueryFilter,
    ) -> Result<(), CharacterError> {
        Self::check_input(dt, input)?;
        self.advance(world, dt, input, filter);
        Ok(())
    }

    pub(crate) fn check_input(dt: f32, input: &CharacterInput) -> Result<(), CharacterError> {
        check(dt.is_finite() && dt > 0.0, "dt", "finite and > 0 s", dt)?;
        check_vector(input.velocity, "input.velocity")?;
        check(
            input.jump_speed.is_finite() && input.jump_speed >= 0.0,
            "input.jump_speed",
            "finite and >= 0 m/s",
            input.jump_speed,
        )
    }

    /// [`plan`](CharacterController::plan) on checked input.
    pub(crate) fn advance(
        &mut self,
        world: &World,
        dt: f32,
        input: &CharacterInput,
        filter: &QueryFilter,
    ) {
        let own = self.body;
        let user = filter;
        let not_own = move |id: BodyId| Some(id) != own && user.predicate.is_none_or(|p| p(id));
        let filter = &QueryFilter {
            predicate: Some(&not_own),
            ..*user
        };
        let scene = world.scene_query();
        let start = self.position;
        self.last_dt = dt;
        self.pushes.clear();
        self.hits.clear();
        self.hit_ceiling = false;

        // 1. Ride the platform: its motion since the last update, exactly.
        let platform = self.platform.take();
        if let Some((id, then)) = platform
            && let Ok(now) = world.transform(id)
        {
            let p = now.transform_point(then.inverse_transform_point(Vec3A::from(self.position)));
            let carry = Vec3::from(p) - self.position;
            let skip = Skipping {
                base: filter,
                skip: Some(id),
            };
            self.slide(&scene, carry, filter, &skip, false);
            self.hits.clear();
        }

        if self.desc.pushed_by_bodies {
            self.be_pushed(&scene, world, dt, filter);
        }

        // 2. Velocity: along walkable ground, or falling.
        let grounded = self.ground.state == GroundState::Grounded;
        let jumping = grounded && input.jump_speed > 0.0;
        let walk = horizontal(input.velocity, self.up);
        let gravity = world.desc().gravity.dot(self.up) * self.desc.gravity_scale;
        let mut motion = walk * dt;
        if jumping {
            self.vertical_speed = input.jump_speed;
        } else if grounded {
            self.vertical_speed = 0.0;
            let n = self.ground.normal;
            motion -= self.up * (motion.dot(n) / n.dot(self.up));
        } else {
            self.vertical_speed += gravity * dt;
        }
        motion += self.up * (self.vertical_speed * dt);

        // 3. Move and slide (climbing steps when grounded).
        let none = Skipping {
            base: filter,
            skip: None,
        };
        self.slide(&scene, motion, filter, &none, grounded && !jumping);
        self.restore_skin(&scene, world, filter);

        // 4. Ground, then 5. stick to it going down.
        self.probe_ground(world, filter);
        if grounded && !jumping && self.ground.state != GroundState::Grounded {
            self.stick_down(&scene, world, filter);
        }
        if self.ground.state == GroundState::Grounded {
            self.vertical_speed = 0.0;
            self.settle(&scene, filter);
        } else if self.hit_ceiling && self.vertical_speed > 0.0 {
            self.vertical_speed = 0.0;
        }

        // 6. Pushes, then the platform for the next update.
        self.record_pushes(world, walk + self.up * self.vertical_speed, dt);
        self.platform = self
            .ground
            .body
            .filter(|_| self.ground.state == GroundState::Grounded)
            .and_then(|id| world.transform(id).ok().map(|pose| (id, pose)));
        self.velocity = (self.position - start) / dt;
    }

    /// Applies the impulses of the last [`plan`](CharacterController::plan) to their
    /// bodies, in order (a body removed since is skipped), and sets the character's own
    /// body (see [`attach_body`](CharacterController::attach_body)) moving to the
    /// character's position over the next step.
    pub fn apply_pushes(&self, world: &mut World) {
        for p in &self.pushes {
            // A body removed or made non-dynamic since the plan is not pushed.
            let _ = world.apply_impulse_at(p.body, p.impulse, p.point);
        }
        if let Some(id) = self.body
            && self.last_dt > 0.0
            && let Ok(at) = world.position(id)
        {
            let _ = world.set_linear_velocity(id, (self.position - at) / self.last_dt);
        }
    }

    /// Gives the character a kinematic body of its shape in `world`, so bodies collide
    /// with it (a dynamic body rests on or bounces off it) and other characters block on
    /// it. The character's queries skip it; after each update the body is set moving so
    /// that the next step brings it to the character (other characters then see it where
    /// the character was at the end of the last update). Returns its id.
    pub fn attach_body(&mut self, world: &mut World) -> Result<BodyId, crate::error::PhysicsError> {
        if let Some(id) = self.body
            && world.contains(id)
        {
            return Ok(id);
        }
        let id = world.create_body(&crate::body::BodyDesc {
            rotation: self.rotation,
            ..crate::body::BodyDesc::kinematic(self.desc.shape.clone(), self.position)
        })?;
        self.body = Some(id);
        Ok(id)
    }

    /// The character's own body, if [`attach_body`](CharacterController::attach_body)
    /// made one.
    #[must_use]
    pub fn body(&self) -> Option<BodyId> {
        self.body
    }

    /// Moves the character by what dynamic bodies moving into it push it (the fastest
    /// along each contact's normal), swept.
    fn be_pushed(&mut self, scene: &SceneQuery<'_>, world: &World, dt: f32, filter: &QueryFilter) {
        let mut contacts = std::mem::take(&mut self.contacts);
        scene.collide_shape(
            &self.desc.shape,
            self.pose_at(self.position),
            self.desc.skin * 2.0,
            filter,
            &mut contacts,
        );
        let mut push = Vec3::ZERO;
        for c in &contacts {
            if world.motion_type(c.body) != Ok(MotionType::Dynamic) {
                continue;
            }
            let along = point_velocity(world, c.body, c.point).dot(c.normal) - push.dot(c.normal);
            if along > 0.0 {
                push += c.normal * along;
            }
        }
        self.contacts = contacts;
        if push != Vec3::ZERO {
            let none = Skipping {
                base: filter,
                skip: None,
            };
            self.slide(scene, push * dt, filter, &none, false);
            self.hits.clear();
        }
    }

    fn pose_at(&self, p: Vec3) -> Isometry {
        Isometry::new(Vec3A::from(p), self.rotation)
    }

    fn filtered<'q>(
        filter: &'q QueryFilter<'q>,
        pred: &'q (dyn Fn(BodyId) -> bool + Sync),
    ) -> QueryFilter<'q> {
        QueryFilter {
            predicate: Some(pred),
            ..*filter
        }
    }

    /// Sweeps the shape from `p` along `motion` (looking a skin further): how far it may
    /// move along `motion` and stay a skin short of what it would hit, and that hit when
    /// it cuts the move short.
    fn sweep(
        &self,
        scene: &SceneQuery<'_>,
        p: Vec3,
        motion: Vec3,
        filter: &QueryFilter,
    ) -> (f32, Option<ShapeCastHit>) {
        let len = motion.length();
        if len < MIN_MOVE {
            return (0.0, None);
        }
        let dir = motion / len;
        let reach = len + self.desc.skin;
        let options = ShapeCastOptions {
            ignore_initial_contacts_moving_away: true,
        };
        let pose = self.pose_at(p);
        let Some(hit) =
            scene.cast_shape_with(&self.desc.shape, pose, dir * reach, filter, &options)
        else {
            return (len, None);
        };
        let travel = reach * hit.fraction;
        let into = -dir.dot(hit.normal);
        let back = if into > 1e-3 {
            (self.desc.skin / into).min(travel)
        } else {
            0.0
        };
        let free = travel - back;
        if free >= len {
            (len, None)
        } else {
            (free, Some(hit))
        }
    }

    /// Pushes the shape out of what it touches closer than a skin (walls, ceilings, steep
    /// ground pushed horizontally; walkable ground is evened out by [`Self::settle`]).
    /// Dynamic bodies do not push it here: the character pushes them (and they push it
    /// only with [`CharacterDesc::pushed_by_bodies`]), or a ball resting on its head would
    /// press it into the ground.
    fn restore_skin(&mut self, scene: &SceneQuery<'_>, world: &World, filter: &QueryFilter) {
        let skin = self.desc.skin;
        let mut contacts = std::mem::take(&mut self.contacts);
        scene.collide_shape(
            &self.desc.shape,
            self.pose_at(self.position),
            skin,
            filter,
            &mut contacts,
        );
        let mut shift = Vec3::ZERO;
        for c in &contacts {
            let n = c.normal;
            let nu = n.dot(self.up);
            if nu >= self.cos_max_slope || world.motion_type(c.body) == Ok(MotionType::Dynamic) {
                continue;
            }
            let push = if nu > 0.0 {
                horizontal(n, self.up).normalize_or_zero()
            } else {
                n
            };
            let along = push.dot(n);
            if along < 0.1 {
                continue;
            }
            let short = skin + c.depth - shift.dot(n);
            if short > MIN_MOVE {
                shift += push * (short / along);
            }
        }
        self.contacts = contacts;
        self.position += shift;
    }

    /// Move and slide by `motion` (see [`slide`]); steps up when `grounded` and a steep
    /// face blocks the way.
    fn slide(
        &mut self,
        scene: &SceneQuery<'_>,
        motion: Vec3,
        filter: &QueryFilter,
        skip: &Skipping<'_, '_>,
        grounded: bool,
    ) {
        let pred = |id: BodyId| skip.accepts(id);
        let filter = Self::filtered(filter, &pred);
        let mut planes: ArrayVec<Plane, MAX_PLANES> = ArrayVec::new();
        let mut remaining = motion;
        let mut stepped = false;
        for _ in 0..self.desc.max_slide_iterations {
            let len = remaining.length();
            if len < MIN_MOVE {
                break;
            }
            let dir = remaining / len;
            let (moved, hit) = self.sweep(scene, self.position, remaining, &filter);
            self.position += dir * moved;
            let Some(hit) = hit else {
                break;
            };
            let _ = self.hits.try_push(hit);
            if hit.normal.dot(self.up) < -MIN_SUPPORT_COS && remaining.dot(self.up) > 0.0 {
                self.hit_ceiling = true;
            }
            let left = dir * (len - moved);
            let plane = slide::plane(hit.normal, self.up, self.cos_max_slope);
            if grounded && !stepped && !plane.ground && self.desc.step_height > 0.0 {
                stepped = true;
                let ahead = horizontal(left, self.up);
                if ahead.length() > MIN_MOVE
                    && let Some(p) = self.step_up(scene, ahead, &filter)
                {
                    self.position = p;
                    break;
                }
            }
            remaining = slide::project(left, plane, &mut planes, motion, self.up);
        }
    }

    /// The move `ahead` tried lifted by the step height and set down again: where it
    /// lands, if on walkable ground higher than it started.
    fn step_up(&self, scene: &SceneQuery<'_>, ahead: Vec3, filter: &QueryFilter) -> Option<Vec3> {
        let lift = self.up * self.desc.step_height;
        let (rise, _) = self.sweep(scene, self.position, lift, filter);
        if rise < MIN_STEP_RISE {
            return None;
        }
        let top = self.position + self.up * rise;
        let (forward, _) = self.sweep(scene, top, ahead, filter);
        if forward < MIN_MOVE {
            return None;
        }
        let over = top + ahead.normalize() * forward;
        let drop = -self.up * (rise + self.desc.skin);
        let (down, hit) = self.sweep(scene, over, drop, filter);
        let hit = hit?;
        if hit.normal.dot(self.up) < self.cos_max_slope {
            // Landed on the step's nosing: keep it when the tread is walkable a body's
            // width ahead (Jolt's step-forward test), so short moves climb over frames.
            let reach = self.desc.shape.local_aabb().half_extents();
            let test = ahead.normalize() * (reach.x.max(reach.z) + self.desc.skin);
            let (ahead_ok, _) = self.sweep(scene, top, test, filter);
            let probe = top + test.normalize() * ahead_ok;
            let (_, tread) = self.sweep(scene, probe, drop, filter);
            if tread.is_none_or(|t| t.normal.dot(self.up) < self.cos_max_slope) {
                return None;
            }
        }
        let landed = over - self.up * down;
        ((landed - self.position).dot(self.up) >= MIN_STEP_RISE).then_some(landed)
    }

    /// Moves along `up` so the gap to walkable ground is the skin (a fall ends anywhere
    /// within two skins of the ground): the character always stands at the same height.
    fn settle(&mut self, scene: &SceneQuery<'_>, filter: &QueryFilter) {
        let Some((gap, n)) = self.ground_gap else {
            return;
        };
        let shift = (self.desc.skin - gap) / n.dot(self.up);
        if shift.abs() < MIN_MOVE {
            return;
        }
        let (moved, _) = self.sweep(scene, self.position, self.up * shift, filter);
        self.position += self.up * (moved * shift.signum());
        self.ground_gap = Some((gap + moved * shift.signum() * n.dot(self.up), n));
    }

    /// Sweeps down by the stick-to-ground distance and lands on walkable ground if any.
    fn stick_down(&mut self, scene: &SceneQuery<'_>, world: &World, filter: &QueryFilter) {
        let before = self.position;
        let drop = -self.up * self.desc.stick_to_ground;
        let none = Skipping {
            base: filter,
            skip: None,
        };
        let saved = self.hits.clone();
        self.slide(scene, drop, filter, &none, false);
        self.hits = saved;
        self.probe_ground(world, filter);
        if self.ground.state != GroundState::Grounded {
            self.position = before;
            self.probe_ground(world, filter);
        }
    }

    /// Sets the ground state from the contacts within two skins.
    fn probe_ground(&mut self, world: &World, filter: &QueryFilter) {
        let scene = world.scene_query();
        let reach = 2.0 * self.desc.skin;
        let mut contacts = std::mem::take(&mut self.contacts);
        scene.collide_shape(
            &self.desc.shape,
            self.pose_at(self.position),
            reach,
            filter,
            &mut contacts,
        );
        self.ground_gap = None;
        let mut best: Option<(bool, f32, ShapeContact, Vec3)> = None;
        for c in &contacts {
            let nu = c.normal.dot(self.up);
            if nu < MIN_SUPPORT_COS || c.depth < -reach {
                continue;
            }
            let (walkable, normal) = if nu >= self.cos_max_slope {
                (true, c.normal)
            } else if let Some(face) = self.ledge(&scene, c, filter) {
                (true, face)
            } else {
                (false, c.normal)
            };
            // Walkable beats steep, then the most level, then the first in order.
            let key = (walkable, normal.dot(self.up));
            if best.is_none_or(|(w, u, _, _)| key > (w, u)) {
                best = Some((walkable, key.1, *c, normal));
            }
        }
        self.contacts = contacts;
        self.ground = match best {
            None => CharacterGround {
                normal: self.up,
                ..CharacterGround::default()
            },
            Some((walkable, _, c, normal)) => {
                if walkable && normal == c.normal {
                    self.ground_gap = Some((-c.depth, c.normal));
                }
                CharacterGround {
                    state: if walkable {
                        GroundState::Grounded
                    } else {
                        GroundState::OnSteepGround
                    },
                    normal,
                    body: Some(c.body),
                    point: c.point,
                    velocity: point_velocity(world, c.body, c.point),
                }
            }
        };
    }

    /// For a steep contact under the character: the walkable face just behind it (a
    /// stair's tread behind its nosing), found by a short ray down.
    fn ledge(
        &self,
        scene: &SceneQuery<'_>,
        c: &ShapeContact,
        filter: &QueryFilter,
    ) -> Option<Vec3> {
        let away = horizontal(c.point - self.position, self.up).normalize_or_zero();
        if away == Vec3::ZERO {
            return None;
        }
        let h = self.desc.skin + LEDGE_OFFSET;
        let origin = c.point + away * LEDGE_OFFSET + self.up * h;
        let hit = scene.cast_ray(origin, -self.up * (2.0 * h), filter)?;
        (hit.normal.dot(self.up) >= self.cos_max_slope).then_some(hit.normal)
    }

    /// Impulses for the dynamic bodies the move hit, one per body.
    fn record_pushes(&mut self, world: &World, velocity: Vec3, dt: f32) {
        if self.desc.max_push_force <= 0.0 {
            return;
        }
        for hit in &self.hits {
            if world.motion_type(hit.body) != Ok(MotionType::Dynamic)
                || self.pushes.iter().any(|p| p.body == hit.body)
            {
                continue;
            }
            let into = -hit.normal;
            let approach = (velocity - point_velocity(world, hit.body, hit.point)).dot(into);
            if approach <= 0.0 {
                continue;
            }
            let j = (self.desc.mass * approach).min(self.desc.max_push_force * dt);
            let _ = self.pushes.try_push(CharacterPush {
                body: hit.body,
                impulse: into * j,
                point: hit.point,
            });
        }
    }
}

/// Body `id`'s velocity at world point `p` (zero for a body that is gone).
fn point_velocity(world: &World, id: BodyId, p: Vec3) -> Vec3 {
    let (Ok(v), Ok(w), Ok(c)) = (
        world.linear_velocity(id),
        world.angular_velocity(id),
        world.center_of_mass(id),
    ) else {
        return Vec3::ZERO;
    };
    v + w.cross(p - c)
}
