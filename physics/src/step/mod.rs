//! The step, declared as a joule-graph graph.
//!
//! ```text
//!   step listeners -> broadphase -> find collisions -> narrow phase -> contact events
//!     -> constraint graph -> solve -> integrate -> find CCD contacts
//!     -> resolve CCD contacts -> islands and sleep -> finalize
//! ```
//!
//! "solve" runs every substep and every colour inside it as parallel stages of blocks
//! (see `dynamics/solver/mod.rs`); "find CCD contacts" is a dynamic task that spawns one job per
//! fast body to cast (none when there are none).
//!
//! Each stage is a task that declares what it reads and writes; `build()` checks that no
//! two unordered stages conflict, and at run time a stage can only reach what it declared.
//! The stages run their inner parallel work (pair finding, narrow-phase blocks, the
//! solver's colour blocks) as scoped jobs on the same job system. The graph is built once
//! per world and run every step on a context holding the world's parts; it never sees the
//! `World` itself, which is what will let a game embed the step in its own frame graph.
//! Stages record spans (`JobSystem::record_span`) so `World::step_traced` can show them.

pub mod listener;
pub(crate) mod trace;

use joule_graph::{BuildError, Graph, GraphBuilder, TaskContext};

use crate::body::Bodies;
use crate::body::filter::ExclusionList;
use crate::collision::broad_phase::BroadPhase;
use crate::collision::ccd::{self, CcdState};
use crate::collision::pipeline::{self, CollisionSettings, Scratch};
use crate::contact::ContactManager;
use crate::dynamics::island::{self, IslandScratch, SleepEvent};
use crate::dynamics::solver::{self, SolverScratch};
use crate::events::Events;
use crate::joint::Joints;
use crate::material::MaterialMixing;
use crate::math::Vec3A;
use crate::settings::WorldDesc;
use crate::step::listener::{StepListeners, StepPhase};
use crate::step::trace::STAGES;

/// The time step of the running step.
#[derive(Default)]
pub(crate) struct StepDt(pub f32);

/// Whether a world's parts are in the context (between `lend_to` and `take_back`).
#[derive(Default)]
pub(crate) struct Lent(pub bool);

/// Sleep and wake events of the running step.
#[derive(Default)]
pub(crate) struct SleepEvents(pub Vec<SleepEvent>);

fn span(cx: &TaskContext<'_>, name: &'static str, f: impl FnOnce()) {
    let jobs = cx.jobs();
    let start = jobs.now_ns();
    f();
    jobs.record_span(name, start, jobs.now_ns());
}

fn collision_settings(desc: &WorldDesc, dt: f32) -> CollisionSettings {
    CollisionSettings {
        margin: desc.contact_margin,
        report_persist: desc.report_persist_events,
        dt,
    }
}

/// Builds the step graph.
pub(crate) fn build() -> Result<Graph, BuildError> {
    let mut b = GraphBuilder::new();
    let listeners = b
        .task(STAGES[0], |cx| {
            span(cx, STAGES[0], || {
                let dt = cx.read::<StepDt>().0;
                let mut listeners = cx.write::<StepListeners>();
                let mut bodies = cx.write::<Bodies>();
                let mut sleep = cx.write::<SleepEvents>();
                listeners.run(StepPhase::Before, &mut bodies, &mut sleep.0, dt);
            });
        })
        .reads::<StepDt>()
        .writes::<StepListeners>()
        .writes::<Bodies>()
        .writes::<SleepEvents>()
        .id();
    let broadphase = b
        .task(STAGES[1], |cx| {
            span(cx, STAGES[1], || {
                let bodies = cx.read::<Bodies>();
                let mut bp = cx.write::<BroadPhase>();
                let mut scratch = cx.write::<Scratch>();
                pipeline::update_broad_phase(cx.jobs(), &bodies, &mut bp, &mut scratch);
            });
        })
        .reads::<Bodies>()
        .writes::<BroadPhase>()
        .writes::<Scratch>()
        .after([listeners])
        .id();
    let find = b
        .task(STAGES[2], |cx| {
            span(cx, STAGES[2], || {
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
        .task(STAGES[3], |cx| {
            span(cx, STAGES[3], || {
                let bodies = cx.read::<Bodies>();
                let bp = cx.read::<BroadPhase>();
                let desc = cx.read::<WorldDesc>();
                let dt = cx.read::<StepDt>().0;
                let mut contacts = cx.write::<ContactManager>();
                pipeline::update_contacts(
                    cx.jobs(),
                    &bodies,
                    &bp,
                    &cx.read::<MaterialMixing>(),
                    &cx.read::<ExclusionList>(),
                    &mut contacts,
                    &collision_settings(&desc, dt),
                );
            });
        })
        .reads::<Bodies>()
        .reads::<BroadPhase>()
        .reads::<WorldDesc>()
        .reads::<StepDt>()
        .reads::<MaterialMixing>()
        .reads::<ExclusionList>()
        .writes::<ContactManager>()
        .after([find])
        .id();
    let events = b
        .task(STAGES[4], |cx| {
            span(cx, STAGES[4], || {
                let desc = cx.read::<WorldDesc>();
                let mut contacts = cx.write::<ContactManager>();
                let mut events = cx.write::<Events>();
                let mut bodies = cx.write::<Bodies>();
                let mut sleep = cx.write::<SleepEvents>();
                pipeline::finish_contacts(
                    &mut contacts,
                    &collision_settings(&desc, 0.0),
                    &mut events,
                );
                events.sort();
                island::wake_touched(&mut bodies, &mut contacts, &mut sleep.0);
            });
        })
        .reads::<WorldDesc>()
        .writes::<ContactManager>()
        .writes::<Events>()
        .writes::<Bodies>()
        .writes::<SleepEvents>()
        .after([narrow])
        .id();
    let graph = b
        .task(STAGES[5], |cx| {
            span(cx, STAGES[5], || {
                let desc = cx.read::<WorldDesc>();
                let dt = cx.read::<StepDt>().0;
                let bodies = cx.read::<Bodies>();
                let contacts = cx.read::<ContactManager>();
                let mut joints = cx.write::<Joints>();
                let mut scratch = cx.write::<SolverScratch>();
                solver::prepare(
                    cx.jobs(),
                    &bodies,
                    &contacts,
                    &mut joints,
                    Vec3A::from(desc.gravity),
                    dt,
                    &desc.solver,
                    &mut scratch,
                );
            });
        })
        .reads::<WorldDesc>()
        .reads::<StepDt>()
        .reads::<Bodies>()
        .reads::<ContactManager>()
        .writes::<Joints>()
        .writes::<SolverScratch>()
        .after([events])
        .id();
    let solve = b
        .task(STAGES[6], |cx| {
            span(cx, STAGES[6], || {
                solver::solve(cx.jobs(), &mut cx.write::<SolverScratch>());
            });
        })
        .writes::<SolverScratch>()
        .after([graph])
        .id();
    let integrate = b
        .task(STAGES[7], |cx| {
            span(cx, STAGES[7], || {
                let mut scratch = cx.write::<SolverScratch>();
                let mut bodies = cx.write::<Bodies>();
                let mut contacts = cx.write::<ContactManager>();
                let mut joints = cx.write::<Joints>();
                solver::finish(
                    cx.jobs(),
                    &mut bodies,
                    &mut contacts,
                    &mut joints,
                    &mut scratch,
                );
            });
        })
        .writes::<SolverScratch>()
        .writes::<Bodies>()
        .writes::<ContactManager>()
        .writes::<Joints>()
        .after([solve])
        .id();
    let find_ccd = b
        .dynamic(STAGES[8], |cx, spawner| {
            span(cx, STAGES[8], || {
                let bodies = cx.read::<Bodies>();
                let mut state = cx.write::<CcdState>();
                ccd::collect_candidates(&bodies, &mut state);
                for i in 0..state.candidates.len() as u32 {
                    spawner.spawn(move |cx, _| {
                        span(cx, STAGES[8], || {
                            let hit = {
                                let st = cx.read::<CcdState>();
                                let bodies = cx.read::<Bodies>();
                                let bp = cx.read::<BroadPhase>();
                                let desc = cx.read::<WorldDesc>();
                                let exclusions = cx.read::<ExclusionList>();
                                ccd::cast_body(
                                    &bodies,
                                    &bp,
                                    &desc.layers,
                                    &exclusions,
                                    &st,
                                    i as usize,
                                )
                            };
                            if let Some(hit) = hit {
                                cx.write::<CcdState>().hits.push(hit);
                            }
                        });
                    });
                }
            });
        })
        .reads::<Bodies>()
        .reads::<BroadPhase>()
        .reads::<WorldDesc>()
        .reads::<ExclusionList>()
        .writes::<CcdState>()
        .after([integrate])
        .id();
    let resolve_ccd = b
        .task(STAGES[9], |cx| {
            span(cx, STAGES[9], || {
                let desc = cx.read::<WorldDesc>();
                let mixing = cx.read::<MaterialMixing>();
                let mut bodies = cx.write::<Bodies>();
                let mut state = cx.write::<CcdState>();
                let mut sleep = cx.write::<SleepEvents>();
                let response = ccd::CcdResponse {
                    mixing: &mixing,
                    restitution_threshold: desc.solver.restitution_threshold,
                };
                ccd::resolve(&mut bodies, &mut state, &response, &mut sleep.0);
            });
        })
        .reads::<WorldDesc>()
        .reads::<MaterialMixing>()
        .writes::<Bodies>()
        .writes::<CcdState>()
        .writes::<SleepEvents>()
        .after([find_ccd])
        .id();
    let sleep = b
        .task(STAGES[10], |cx| {
            span(cx, STAGES[10], || {
                let desc = cx.read::<WorldDesc>();
                let dt = cx.read::<StepDt>().0;
                let contacts = cx.read::<ContactManager>();
                let joints = cx.read::<Joints>();
                let mut bodies = cx.write::<Bodies>();
                let mut scratch = cx.write::<IslandScratch>();
                let mut sleep = cx.write::<SleepEvents>();
                island::update_sleep(
                    &mut bodies,
                    &contacts,
                    &joints,
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
        .reads::<Joints>()
        .writes::<Bodies>()
        .writes::<IslandScratch>()
        .writes::<SleepEvents>()
        .after([resolve_ccd])
        .id();
    b.task(STAGES[11], |cx| {
        span(cx, STAGES[11], || {
            let dt = cx.read::<StepDt>().0;
            let mut bodies = cx.write::<Bodies>();
            for body in &mut bodies.bodies {
                body.force = Vec3A::ZERO;
                body.torque = Vec3A::ZERO;
            }
            let mut sleep = cx.write::<SleepEvents>();
            cx.write::<StepListeners>()
                .run(StepPhase::After, &mut bodies, &mut sleep.0, dt);
            sleep.0.sort_by_key(|e| (e.body, e.asleep));
        });
    })
    .reads::<StepDt>()
    .writes::<Bodies>()
    .writes::<SleepEvents>()
    .writes::<StepListeners>()
    .after([sleep]);
    b.build()
}
