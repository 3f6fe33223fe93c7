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

use std::sync::Mutex;

use joule_graph::{BuildError, Graph, Read, Spawner, Write};
use joule_jobs::JobSystem;

use crate::body::Bodies;
use crate::body::filter::ExclusionList;
use crate::collision::broad_phase::BroadPhase;
use crate::collision::ccd::{self, CcdHit, CcdState};
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

/// The CCD casts' hits of the running step, pushed by the cast jobs (each holds its reads
/// for its whole run, so they share this one lock instead of writing `CcdState`); the
/// resolve stage moves them into `CcdState` and sorts them, so the order they came in
/// does not reach the results.
#[derive(Default)]
pub(crate) struct CcdHits(pub Mutex<Vec<CcdHit>>);

/// Bodies per job when "finalize" clears the accumulated forces.
const FINALIZE_BLOCK: usize = 1024;

fn span(jobs: &JobSystem, name: &'static str, f: impl FnOnce()) {
    let start = jobs.now_ns();
    f();
    jobs.record_span(name, start, jobs.now_ns());
}

fn collision_settings(desc: &WorldDesc, dt: f32) -> CollisionSettings {
    CollisionSettings {
        margin: desc.contact_margin,
        report_persist: desc.report_persist_events,
        dt,
        gravity: desc.gravity.into(),
    }
}

/// Builds the step graph. Each stage's parameters are what it reads and writes; the graph
/// derives its declared access from their types.
pub(crate) fn build() -> Result<Graph, BuildError> {
    let mut b = Graph::builder();
    let listeners = b
        .task(
            STAGES[0],
            |jobs: &JobSystem,
             dt: Read<StepDt>,
             mut listeners: Write<StepListeners>,
             mut bodies: Write<Bodies>,
             bp: Read<BroadPhase>,
             mut sleep: Write<SleepEvents>| {
                span(jobs, STAGES[0], || {
                    listeners.run(StepPhase::Before, &mut bodies, &bp, &mut sleep.0, dt.0);
                });
            },
        )
        .id();
    let broadphase = b
        .task(
            STAGES[1],
            |jobs: &JobSystem,
             bodies: Read<Bodies>,
             mut bp: Write<BroadPhase>,
             mut scratch: Write<Scratch>| {
                span(jobs, STAGES[1], || {
                    pipeline::update_broad_phase(jobs, &bodies, &mut bp, &mut scratch);
                });
            },
        )
        .after([listeners])
        .id();
    let find = b
        .task(
            STAGES[2],
            |jobs: &JobSystem,
             bodies: Read<Bodies>,
             desc: Read<WorldDesc>,
             exclusions: Read<ExclusionList>,
             mixing: Read<MaterialMixing>,
             mut bp: Write<BroadPhase>,
             mut contacts: Write<ContactManager>,
             mut scratch: Write<Scratch>| {
                span(jobs, STAGES[2], || {
                    pipeline::find_new_contacts(
                        jobs,
                        &bodies,
                        &mut bp,
                        &mut contacts,
                        &exclusions,
                        &desc.layers,
                        &mixing,
                        &mut scratch,
                    );
                });
            },
        )
        .after([broadphase])
        .id();
    let narrow = b
        .task(
            STAGES[3],
            |jobs: &JobSystem,
             bodies: Read<Bodies>,
             bp: Read<BroadPhase>,
             desc: Read<WorldDesc>,
             dt: Read<StepDt>,
             mixing: Read<MaterialMixing>,
             exclusions: Read<ExclusionList>,
             mut contacts: Write<ContactManager>| {
                span(jobs, STAGES[3], || {
                    pipeline::update_contacts(
                        jobs,
                        &bodies,
                        &bp,
                        &mixing,
                        &exclusions,
                        &mut contacts,
                        &collision_settings(&desc, dt.0),
                    );
                });
            },
        )
        .after([find])
        .id();
    let events = b
        .task(
            STAGES[4],
            |jobs: &JobSystem,
             desc: Read<WorldDesc>,
             mut contacts: Write<ContactManager>,
             mut events: Write<Events>,
             mut bodies: Write<Bodies>,
             mut sleep: Write<SleepEvents>| {
                span(jobs, STAGES[4], || {
                    pipeline::finish_contacts(
                        &mut contacts,
                        &collision_settings(&desc, 0.0),
                        &mut events,
                    );
                    events.sort();
                    island::wake_touched(&mut bodies, &mut contacts, &mut sleep.0);
                });
            },
        )
        .after([narrow])
        .id();
    let graph = b
        .task(
            STAGES[5],
            |jobs: &JobSystem,
             desc: Read<WorldDesc>,
             dt: Read<StepDt>,
             bodies: Read<Bodies>,
             contacts: Read<ContactManager>,
             mut joints: Write<Joints>,
             mut scratch: Write<SolverScratch>| {
                span(jobs, STAGES[5], || {
                    solver::prepare(
                        jobs,
                        &bodies,
                        &contacts,
                        &mut joints,
                        Vec3A::from(desc.gravity),
                        dt.0,
                        &desc.solver,
                        &mut scratch,
                    );
                });
            },
        )
        .after([events])
        .id();
    let solve = b
        .task(
            STAGES[6],
            |jobs: &JobSystem, mut scratch: Write<SolverScratch>| {
                span(jobs, STAGES[6], || solver::solve(jobs, &mut scratch));
            },
        )
        .after([graph])
        .id();
    let integrate = b
        .task(
            STAGES[7],
            |jobs: &JobSystem,
             dt: Read<StepDt>,
             mut scratch: Write<SolverScratch>,
             mut bodies: Write<Bodies>,
             mut contacts: Write<ContactManager>,
             mut joints: Write<Joints>,
             mut events: Write<Events>| {
                span(jobs, STAGES[7], || {
                    solver::finish(jobs, &mut bodies, &mut contacts, &mut joints, &mut scratch);
                    if bodies.force_reporters > 0 {
                        solver::force_events(&contacts, &scratch, dt.0, &mut events.forces);
                        events.forces.sort_unstable_by_key(|e| (e.body_a, e.body_b));
                    }
                });
            },
        )
        .after([solve])
        .id();
    let find_ccd = b
        .dynamic(
            STAGES[8],
            |jobs: &JobSystem,
             bodies: Read<Bodies>,
             mut state: Write<CcdState>,
             spawner: Spawner<u32>| {
                span(jobs, STAGES[8], || {
                    ccd::collect_candidates(&bodies, &mut state);
                    for i in 0..state.candidates.len() as u32 {
                        spawner.spawn(i);
                    }
                });
            },
            |i: u32,
             jobs: &JobSystem,
             state: Read<CcdState>,
             bodies: Read<Bodies>,
             bp: Read<BroadPhase>,
             desc: Read<WorldDesc>,
             exclusions: Read<ExclusionList>,
             hits: Read<CcdHits>| {
                span(jobs, STAGES[8], || {
                    let hit =
                        ccd::cast_body(&bodies, &bp, &desc.layers, &exclusions, &state, i as usize);
                    if let Some(hit) = hit {
                        hits.0
                            .lock()
                            .expect("a cast job panicked while it pushed a hit")
                            .push(hit);
                    }
                });
            },
        )
        .after([integrate])
        .id();
    let resolve_ccd = b
        .task(
            STAGES[9],
            |jobs: &JobSystem,
             desc: Read<WorldDesc>,
             mixing: Read<MaterialMixing>,
             mut bodies: Write<Bodies>,
             mut state: Write<CcdState>,
             mut hits: Write<CcdHits>,
             mut sleep: Write<SleepEvents>| {
                span(jobs, STAGES[9], || {
                    let found = hits
                        .0
                        .get_mut()
                        .expect("a cast job panicked while it pushed a hit");
                    state.hits.append(found);
                    let response = ccd::CcdResponse {
                        mixing: &mixing,
                        restitution_threshold: desc.solver.restitution_threshold,
                    };
                    ccd::resolve(&mut bodies, &mut state, &response, &mut sleep.0);
                });
            },
        )
        .after([find_ccd])
        .id();
    let sleep = b
        .task(
            STAGES[10],
            |jobs: &JobSystem,
             desc: Read<WorldDesc>,
             dt: Read<StepDt>,
             contacts: Read<ContactManager>,
             joints: Read<Joints>,
             mut bodies: Write<Bodies>,
             mut scratch: Write<IslandScratch>,
             mut sleep: Write<SleepEvents>| {
                span(jobs, STAGES[10], || {
                    island::update_sleep(
                        &mut bodies,
                        &contacts,
                        &joints,
                        &desc.sleep,
                        dt.0,
                        &mut scratch,
                        &mut sleep.0,
                    );
                });
            },
        )
        .after([resolve_ccd])
        .id();
    b.task(
        STAGES[11],
        |jobs: &JobSystem,
         dt: Read<StepDt>,
         mut bodies: Write<Bodies>,
         mut sleep: Write<SleepEvents>,
         bp: Read<BroadPhase>,
         mut listeners: Write<StepListeners>| {
            span(jobs, STAGES[11], || {
                // In parallel blocks: a pass over every body's cold record (about 40 µs
                // of free10k's 1 ms step when serial).
                jobs.parallel_for_slice(&mut bodies.bodies, FINALIZE_BLOCK, |_, block| {
                    for body in block {
                        body.force = Vec3A::ZERO;
                        body.torque = Vec3A::ZERO;
                    }
                });
                listeners.run(StepPhase::After, &mut bodies, &bp, &mut sleep.0, dt.0);
                sleep.0.sort_by_key(|e| (e.body, e.asleep));
            });
        },
    )
    .after([sleep]);
    b.build()
}
