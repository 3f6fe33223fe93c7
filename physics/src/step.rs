//! The step, declared as a joule-graph graph.
//!
//! ```text
//!   broadphase -> find collisions -> narrow phase -> contact events -> solve
//!        -> islands and sleep -> finalize
//! ```
//!
//! Each stage is a task that declares what it reads and writes; `build()` checks that no
//! two unordered stages conflict, and at run time a stage can only reach what it declared.
//! The stages run their inner parallel work (pair finding, narrow-phase blocks, the
//! solver's colour blocks) as scoped jobs on the same job system. The graph is built once
//! per world and run every step on a context holding the world's parts; it never sees the
//! `World` itself, which is what will let a game embed the step in its own frame graph.
//! Stages record spans (`JobSystem::record_span`) so `World::step_traced` can show them.

use joule_graph::{BuildError, Graph, GraphBuilder, TaskContext};

use crate::body::Bodies;
use crate::broad_phase::BroadPhase;
use crate::contact::{ContactManager, MaterialMixing};
use crate::events::Events;
use crate::filter::ExclusionList;
use crate::island::{self, IslandScratch, SleepEvent};
use crate::math::Vec3A;
use crate::pipeline::{self, CollisionSettings, Scratch};
use crate::solver::{self, SolverScratch};
use crate::step_trace::STAGES;
use crate::world::WorldDesc;

/// The time step of the running step.
pub(crate) struct StepDt(pub f32);

/// Sleep and wake events of the running step.
#[derive(Default)]
pub(crate) struct SleepEvents(pub Vec<SleepEvent>);

fn span(cx: &TaskContext<'_>, name: &'static str, f: impl FnOnce()) {
    let jobs = cx.jobs();
    let start = jobs.now_ns();
    f();
    jobs.record_span(name, start, jobs.now_ns());
}

fn collision_settings(desc: &WorldDesc) -> CollisionSettings {
    CollisionSettings {
        margin: desc.contact_margin,
        report_persist: desc.report_persist_events,
    }
}

/// Builds the step graph.
pub(crate) fn build() -> Result<Graph, BuildError> {
    let mut b = GraphBuilder::new();
    let broadphase = b
        .task(STAGES[0], |cx| {
            span(cx, STAGES[0], || {
                let bodies = cx.read::<Bodies>();
                let mut bp = cx.write::<BroadPhase>();
                let mut scratch = cx.write::<Scratch>();
                pipeline::update_broad_phase(cx.jobs(), &bodies, &mut bp, &mut scratch);
            });
        })
        .reads::<Bodies>()
        .writes::<BroadPhase>()
        .writes::<Scratch>()
        .id();
    let find = b
        .task(STAGES[1], |cx| {
            span(cx, STAGES[1], || {
                let bodies = cx.read::<Bodies>();
                let desc = cx.read::<WorldDesc>();
                let exclusions = cx.read::<ExclusionList>();
                let mixing = cx.read::<MaterialMixing>();
                let mut bp = cx.write::<BroadPhase>();
                let mut contacts = cx.write::<ContactManager>();
                let mut scratch = cx.write::<Scratch>();
                pipeline::find_new_contacts(
                    cx.jobs(),
                    &bodies,
                    &mut bp,
                    &mut contacts,
                    &exclusions,
                    &desc.layers,
                    &mixing,
                    &mut scratch,
                );
            });
        })
        .reads::<Bodies>()
        .reads::<WorldDesc>()
        .reads::<ExclusionList>()
        .reads::<MaterialMixing>()
        .writes::<BroadPhase>()
        .writes::<ContactManager>()
        .writes::<Scratch>()
        .after([broadphase])
        .id();
    let narrow = b
        .task(STAGES[2], |cx| {
            span(cx, STAGES[2], || {
                let bodies = cx.read::<Bodies>();
                let bp = cx.read::<BroadPhase>();
                let desc = cx.read::<WorldDesc>();
                let mut contacts = cx.write::<ContactManager>();
                pipeline::update_contacts(
                    cx.jobs(),
                    &bodies,
                    &bp,
                    &mut contacts,
                    &collision_settings(&desc),
                );
            });
        })
        .reads::<Bodies>()
        .reads::<BroadPhase>()
        .reads::<WorldDesc>()
        .writes::<ContactManager>()
        .after([find])
        .id();
    let events = b
        .task(STAGES[3], |cx| {
            span(cx, STAGES[3], || {
                let desc = cx.read::<WorldDesc>();
                let mut contacts = cx.write::<ContactManager>();
                let mut events = cx.write::<Events>();
                let mut bodies = cx.write::<Bodies>();
                let mut sleep = cx.write::<SleepEvents>();
                pipeline::finish_contacts(&mut contacts, &collision_settings(&desc), &mut events);
                events.sort();
                island::wake_touched(&mut bodies, &contacts, &mut sleep.0);
            });
        })
        .reads::<WorldDesc>()
        .writes::<ContactManager>()
        .writes::<Events>()
        .writes::<Bodies>()
        .writes::<SleepEvents>()
        .after([narrow])
        .id();
    let solve = b
        .task(STAGES[4], |cx| {
            span(cx, STAGES[4], || {
                let desc = cx.read::<WorldDesc>();
                let dt = cx.read::<StepDt>().0;
                let mut bodies = cx.write::<Bodies>();
                let mut contacts = cx.write::<ContactManager>();
                let mut scratch = cx.write::<SolverScratch>();
                solver::solve(
                    cx.jobs(),
                    &mut bodies,
                    &mut contacts,
                    Vec3A::from(desc.gravity),
                    dt,
                    &desc.solver,
                    &mut scratch,
                );
            });
        })
        .reads::<WorldDesc>()
        .reads::<StepDt>()
        .writes::<Bodies>()
        .writes::<ContactManager>()
        .writes::<SolverScratch>()
        .after([events])
        .id();
    let sleep = b
        .task(STAGES[5], |cx| {
            span(cx, STAGES[5], || {
                let desc = cx.read::<WorldDesc>();
                let dt = cx.read::<StepDt>().0;
                let contacts = cx.read::<ContactManager>();
                let mut bodies = cx.write::<Bodies>();
                let mut scratch = cx.write::<IslandScratch>();
                let mut sleep = cx.write::<SleepEvents>();
                island::update_sleep(
                    &mut bodies,
                    &contacts,
                    &desc.sleep,
                    dt,
                    &mut scratch,
                    &mut sleep.0,
                );
            });
        })
        .reads::<WorldDesc>()
        .reads::<StepDt>()
        .reads::<ContactManager>()
        .writes::<Bodies>()
        .writes::<IslandScratch>()
        .writes::<SleepEvents>()
        .after([solve])
        .id();
    b.task(STAGES[6], |cx| {
        span(cx, STAGES[6], || {
            let mut bodies = cx.write::<Bodies>();
            for body in &mut bodies.bodies {
                body.force = Vec3A::ZERO;
                body.torque = Vec3A::ZERO;
            }
            cx.write::<SleepEvents>()
                .0
                .sort_by_key(|e| (e.body, e.asleep));
        });
    })
    .writes::<Bodies>()
    .writes::<SleepEvents>()
    .after([sleep]);
    b.build()
}
