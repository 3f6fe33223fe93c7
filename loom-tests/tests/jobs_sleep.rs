//! loom models of joule-jobs' wake-up protocols: the parker, the idle set's Dekker
//! handshake (announce / re-check / park against publish / fence / notify), the latch a
//! `join` or `scope` owner sleeps on, and the counter that `wait` sleeps on.
//!
//! The property is liveness: nobody sleeps through the event it waits for. loom makes that
//! checkable, because a model whose every thread is blocked is reported as a deadlock, so
//! a lost wake-up fails the model instead of hanging it. The loops that the job system
//! runs around these primitives (`WorkerThread::idle`, `Ctx::wait_until` in registry.rs)
//! do not compile under loom; the models restate them step for step and say so.
#![cfg(loom)]

use joule_jobs::Job;
use joule_jobs::deque::{self, Steal, Stealer};
use joule_jobs::injector::Injector;
use joule_jobs::latch::{Counter, Latch};
use joule_jobs::sleep::{IdleSet, Parker};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::thread;
use loom_tests::{Model, Seen, Tally, assert_deadlocks, model, nudge};

/// An unpark that comes before the park leaves a token, so the park returns; the woken
/// thread also sees what the waker wrote before unparking (the parker's mutex orders it).
#[test]
fn parker_unpark_before_or_after_park() {
    model("parker_unpark_before_or_after_park", || {
        let parker = Arc::new(Parker::new());
        let data = Arc::new(AtomicUsize::new(0));
        let waker = {
            let (parker, data) = (parker.clone(), data.clone());
            thread::spawn(move || {
                data.store(1, Ordering::Relaxed);
                parker.unpark();
            })
        };
        parker.park();
        assert_eq!(data.load(Ordering::Relaxed), 1);
        waker.join().unwrap();
    });
}

/// A second unpark before the park is absorbed: one token, not two, so the second park
/// sleeps for good, which loom reports as a deadlock (checked in a child process).
#[test]
fn parker_tokens_do_not_accumulate() {
    assert_deadlocks("child_parker_second_park_sleeps");
}

#[test]
#[ignore = "must deadlock; run in a child process by parker_tokens_do_not_accumulate"]
fn child_parker_second_park_sleeps() {
    model("child_parker_second_park_sleeps", || {
        let parker = Arc::new(Parker::new());
        parker.unpark();
        parker.unpark();
        parker.park();
        parker.park();
    });
}

/// A worker going to sleep as `WorkerThread::idle` does (registry.rs), with one queue:
/// take a job if there is one; else announce, re-check, park unless work showed up, and
/// withdraw the announcement. Returns once it has run a job. Nudge points 2 and 3: after
/// the announcement and after the re-check.
fn sleep_until_job(
    at: usize,
    parked: &Seen,
    idle: &IdleSet,
    parker: &Arc<Parker>,
    mut take: impl FnMut() -> Option<Job>,
    has_work: impl Fn() -> bool,
) {
    loop {
        if let Some(job) = take() {
            job.run();
            return;
        }
        idle.announce(parker);
        nudge(at, 2);
        let work = has_work();
        nudge(at, 3);
        if !work {
            parked.mark();
            parker.park();
        }
        idle.cancel(parker);
    }
}

/// Steals until the deque hands out a job or looks empty.
fn steal(s: &Stealer) -> Option<Job> {
    loop {
        match s.steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => thread::yield_now(),
        }
    }
}

/// A sleeper against a thread that pushes one job to the injector and calls `notify_one`
/// (`Registry::push` from outside the pool). The sleeper must end up running the job.
/// Nudge points: 0 the pusher yields before the push, 1 between push and notify.
#[test]
fn idle_set_injector_push_wakes_sleeper() {
    static TALLY: Tally = Tally::new();
    static PARKED: Seen = Seen::new();
    Model::new("idle_set_injector_push_wakes_sleeper")
        .nudges(4)
        .check(|at| {
            let tally = TALLY.reset(1);
            let queue = Arc::new(Injector::new());
            let idle = Arc::new(IdleSet::new(1));
            let sleeper = {
                let (queue, idle) = (queue.clone(), idle.clone());
                thread::spawn(move || {
                    let parker = Arc::new(Parker::new());
                    sleep_until_job(
                        at,
                        &PARKED,
                        &idle,
                        &parker,
                        || queue.pop(),
                        || !queue.is_empty(),
                    );
                })
            };
            nudge(at, 0);
            queue.push(tally.job(0));
            nudge(at, 1);
            idle.notify_one();
            sleeper.join().unwrap();
            tally.assert_each_ran_once();
            assert!(idle.is_empty());
        });
    PARKED.assert_seen("the sleeper parks before the push");
}

/// The same handshake with a deque as the queue (an external thread's own deque: it pushes
/// and calls `notify_one`; the sleeper re-checks with the stealer's `is_empty`, two Relaxed
/// loads). Here the queue gives no ordering of its own, so only the `SeqCst` fences in
/// `announce` and `notify_one` keep the wake-up from being lost.
#[test]
fn idle_set_deque_push_wakes_sleeper() {
    static TALLY: Tally = Tally::new();
    static PARKED: Seen = Seen::new();
    Model::new("idle_set_deque_push_wakes_sleeper")
        .nudges(4)
        .check(|at| {
            deque_push_and_wake(at, &TALLY, &PARKED, true);
        });
    PARKED.assert_seen("the sleeper parks before the push");
}

/// The deque handshake; `fenced` picks `notify_one` (else `notify_hint`).
fn deque_push_and_wake(at: usize, tally: &'static Tally, parked: &'static Seen, fenced: bool) {
    let tally = tally.reset(1);
    let idle = Arc::new(IdleSet::new(1));
    let (w, s) = deque::new();
    let sleeper = {
        let idle = idle.clone();
        thread::spawn(move || {
            let parker = Arc::new(Parker::new());
            sleep_until_job(at, parked, &idle, &parker, || steal(&s), || !s.is_empty());
        })
    };
    nudge(at, 0);
    w.push(tally.job(0)).unwrap();
    nudge(at, 1);
    if fenced {
        idle.notify_one();
    } else {
        idle.notify_hint();
    }
    sleeper.join().unwrap();
    assert!(w.pop().is_none());
    tally.assert_each_ran_once();
}

/// Why `notify_one` needs its fence: with `notify_hint` (no fence) after a push to a deque,
/// the pusher may read a stale idle count while the sleeper reads a stale `bottom`, and
/// the sleeper sleeps through the push. The job system only uses `notify_hint` where the
/// pusher itself guarantees progress. This shows that the model above can fail.
#[test]
fn idle_set_notify_hint_can_lose_the_wakeup() {
    assert_deadlocks("child_idle_set_notify_hint_loses_the_wakeup");
}

#[test]
#[ignore = "must deadlock; run in a child process by idle_set_notify_hint_can_lose_the_wakeup"]
fn child_idle_set_notify_hint_loses_the_wakeup() {
    Model::new("child_idle_set_notify_hint_loses_the_wakeup")
        .nudges(4)
        .check(|at| {
            static TALLY: Tally = Tally::new();
            static PARKED: Seen = Seen::new();
            deque_push_and_wake(at, &TALLY, &PARKED, false);
        });
}

/// The owner's side of a latch wait (`Ctx::wait_until` with a `Latch` target, without the
/// job-finding part): sleep until the latch is set. Returns whether it ever parked. Nudge
/// point 1: between `try_sleep` and the re-check.
fn wait_for_latch(at: usize, latch: &Latch<Arc<Parker>>, parker: &Arc<Parker>) -> bool {
    let mut parked = false;
    loop {
        if latch.is_set() {
            return parked;
        }
        if !latch.try_sleep() {
            return parked;
        }
        nudge(at, 1);
        if !latch.is_set() {
            parker.park();
            parked = true;
        }
        latch.wake();
    }
}

/// Another thread sets the latch (the end of a stolen `join` half) while the owner goes to
/// sleep on it: the owner wakes, and sees what the setter wrote before `set`. Nudge point
/// 0: the setter yields before setting.
#[test]
fn latch_set_wakes_sleeping_owner() {
    static SLEPT: Seen = Seen::new();
    Model::new("latch_set_wakes_sleeping_owner")
        .nudges(2)
        .check(|at| {
            let parker = Arc::new(Parker::new());
            let latch = Arc::new(Latch::new(parker.clone()));
            let data = Arc::new(AtomicUsize::new(0));
            let setter = {
                let (latch, data) = (latch.clone(), data.clone());
                thread::spawn(move || {
                    data.store(7, Ordering::Relaxed);
                    nudge(at, 0);
                    latch.set();
                })
            };
            if wait_for_latch(at, &latch, &parker) {
                SLEPT.mark();
            }
            assert!(latch.is_set());
            assert_eq!(
                data.load(Ordering::Relaxed),
                7,
                "set publishes the job's result"
            );
            setter.join().unwrap();
        });
    SLEPT.assert_seen("the owner parks before the set");
}

/// As above, plus a third thread that unparks the owner for another reason (an idle-set
/// `notify_one` that picked the waiting owner), so the owner may wake early, move SLEEPING
/// back to UNSET and sleep again, while the setter's CAS from SLEEPING may fail and retry.
#[test]
fn latch_set_with_spurious_wakeup() {
    Model::new("latch_set_with_spurious_wakeup")
        .nudges(2)
        .check(|at| {
            let parker = Arc::new(Parker::new());
            let latch = Arc::new(Latch::new(parker.clone()));
            let data = Arc::new(AtomicUsize::new(0));
            let setter = {
                let (latch, data) = (latch.clone(), data.clone());
                thread::spawn(move || {
                    data.store(7, Ordering::Relaxed);
                    nudge(at, 0);
                    latch.set();
                })
            };
            let stray = {
                let parker = parker.clone();
                thread::spawn(move || parker.unpark())
            };
            wait_for_latch(at, &latch, &parker);
            assert!(latch.is_set());
            assert_eq!(
                data.load(Ordering::Relaxed),
                7,
                "set publishes the job's result"
            );
            setter.join().unwrap();
            stray.join().unwrap();
        });
}

/// Two jobs finish (`done`) on a counter of two while the waiter sleeps on it as
/// `Ctx::wait_until` does: prepare_sleep, re-check, park, finish_sleep. The waiter must
/// wake, and must see both jobs' writes. Nudge points: 0 the waiter yields before
/// `prepare_sleep`, 1 before its re-check, 2 and 3 each job before `done`.
#[test]
fn counter_two_done_wake_waiter() {
    static SLEPT: Seen = Seen::new();
    Model::new("counter_two_done_wake_waiter")
        .nudges(4)
        .check(|at| counter_model(at, &SLEPT, true));
    SLEPT.assert_seen("the waiter parks before the last done");
}

/// The same without the waiter's own re-check between `prepare_sleep` and `park`, so the
/// counter's side of the protocol alone must prevent the lost wake-up: `prepare_sleep`
/// registers, then re-reads the count (`SeqCst`, after the lock that `done` also takes).
#[test]
fn counter_prepare_sleep_alone_prevents_lost_wakeup() {
    static SLEPT: Seen = Seen::new();
    Model::new("counter_prepare_sleep_alone_prevents_lost_wakeup")
        .nudges(4)
        .check(|at| counter_model(at, &SLEPT, false));
    SLEPT.assert_seen("the waiter parks before the last done");
}

fn counter_model(at: usize, slept: &Seen, recheck: bool) {
    let counter = Counter::with_count(2);
    let writes = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let jobs: Vec<_> = (0..2)
        .map(|i| {
            let (counter, writes) = (counter.clone(), writes.clone());
            thread::spawn(move || {
                writes[i].store(1, Ordering::Relaxed);
                nudge(at, 2 + i);
                counter.done();
            })
        })
        .collect();
    let parker = Arc::new(Parker::new());
    loop {
        if counter.is_done() {
            break;
        }
        nudge(at, 0);
        if !counter.loom_prepare_sleep(&parker) {
            break;
        }
        nudge(at, 1);
        if !recheck || !counter.is_done() {
            slept.mark();
            parker.park();
        }
        counter.loom_finish_sleep(&parker);
    }
    assert_eq!(counter.pending(), 0);
    for w in writes.iter() {
        assert_eq!(
            w.load(Ordering::Relaxed),
            1,
            "done publishes the job's effects"
        );
    }
    for j in jobs {
        j.join().unwrap();
    }
}

/// `Ctx::wait_until` (registry.rs) with a latch target and the injector as the only queue,
/// step for step (the spinning phase left out). A waiter that was picked by a pusher's
/// `notify_one` (its `cancel` finds it already removed) owes that wake-up until it runs a
/// job; if it leaves the wait still owing it, it passes it on with `notify_one`. Without
/// `forward` it does not, as registry.rs did before that was added (the lost wake-up of
/// `wait_and_spawn_model`). Passing it on only when the latch is already set right after
/// `cancel` is not enough either: the latch may be set a moment later, before the loop's
/// `is_set` check returns; loom finds that with 3 preemptions.
fn wait_until_latch(
    latch: &Latch<Arc<Parker>>,
    parker: &Arc<Parker>,
    idle: &IdleSet,
    queue: &Injector,
    forward: bool,
) {
    let mut owed = false;
    let leave = |owed: bool| {
        if forward && owed {
            idle.notify_one();
        }
    };
    loop {
        if latch.is_set() {
            return leave(owed);
        }
        if let Some(job) = queue.pop() {
            owed = false;
            job.run();
            continue;
        }
        if !latch.try_sleep() {
            return leave(owed);
        }
        idle.announce(parker);
        if !latch.is_set() && queue.is_empty() {
            parker.park();
        }
        owed |= !idle.cancel(parker);
        latch.wake();
    }
}

/// `worker_main` with `WorkerThread::idle` (registry.rs), one queue: run jobs, sleep when
/// there are none, exit on shutdown.
fn worker_loop(idle: &IdleSet, parker: &Arc<Parker>, queue: &Injector, terminate: &AtomicBool) {
    loop {
        if let Some(job) = queue.pop() {
            job.run();
            continue;
        }
        if terminate.load(Ordering::Acquire) {
            return;
        }
        idle.announce(parker);
        if queue.is_empty() && !terminate.load(Ordering::SeqCst) {
            parker.park();
        }
        idle.cancel(parker);
    }
}

/// A worker W sleeps; the main thread M waits on a latch and sleeps too (announced last);
/// an outside thread X spawns a job (injector + `notify_one`) and then sets M's latch.
/// `notify_one` pops the newest sleeper, M, whose latch is set by the time it wakes. If M
/// returned from the wait without running the job or passing the wake-up on, W would sleep
/// on: the one wake-up the push paid for would be lost. M then waits for the job to run
/// without helping (it goes on with other work in a game), so a lost wake-up deadlocks
/// the model. After the check, the model shuts the worker down as `Handle::drop` does.
fn wait_and_spawn_model(name: &str, tally: &'static Tally, forward: bool) {
    // 3 preemptions: a weaker fix (pass the wake-up on only when the latch is already set
    // right after `cancel`) still loses it, and loom needs 3 to show that.
    Model::new(name).min_preemptions(3).check(move |_| {
        let tally = tally.reset(1);
        let queue = Arc::new(Injector::new());
        let idle = Arc::new(IdleSet::new(2));
        let terminate = Arc::new(AtomicBool::new(false));
        let worker_parker = Arc::new(Parker::new());
        let main_parker = Arc::new(Parker::new());
        let latch = Arc::new(Latch::new(main_parker.clone()));
        let ran = Arc::new(Parker::new());
        let worker = {
            let (idle, parker, queue, terminate) = (
                idle.clone(),
                worker_parker.clone(),
                queue.clone(),
                terminate.clone(),
            );
            thread::spawn(move || worker_loop(&idle, &parker, &queue, &terminate))
        };
        let spawner = {
            let (idle, queue, latch, ran) =
                (idle.clone(), queue.clone(), latch.clone(), ran.clone());
            thread::spawn(move || {
                queue.push(Job::new("spawned", move || {
                    tally.job(0).run();
                    ran.unpark();
                }));
                idle.notify_one();
                latch.set();
            })
        };
        wait_until_latch(&latch, &main_parker, &idle, &queue, forward);
        // The job must run without the main thread's help.
        ran.park();
        terminate.store(true, Ordering::SeqCst);
        idle.notify_all();
        worker_parker.unpark();
        spawner.join().unwrap();
        worker.join().unwrap();
        tally.assert_each_ran_once();
    });
}

/// The waiter passes on a wake-up it was picked for but did not use: the spawned job runs
/// although the main thread does not help (this is `Ctx::wait_until` as written).
#[test]
fn wait_until_forwarding_the_wakeup_runs_the_job() {
    static TALLY: Tally = Tally::new();
    wait_and_spawn_model(
        "wait_until_forwarding_the_wakeup_runs_the_job",
        &TALLY,
        true,
    );
}

/// Without the forwarding (`Ctx::wait_until` before it was added), the model finds the
/// lost wake-up: it deadlocks (checked in a child process).
#[test]
fn wait_until_without_forwarding_strands_a_job() {
    assert_deadlocks("child_wait_until_without_forwarding");
}

#[test]
#[ignore = "must deadlock; run in a child process by wait_until_without_forwarding_strands_a_job"]
fn child_wait_until_without_forwarding() {
    static TALLY: Tally = Tally::new();
    wait_and_spawn_model("child_wait_until_without_forwarding", &TALLY, false);
}
