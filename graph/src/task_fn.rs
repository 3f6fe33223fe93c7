//! Closures over parameters: how `|bodies: Read<Bodies>, bp: Write<BroadPhase>| ...`
//! becomes a task whose declared access is read `Bodies`, write `BroadPhase`.
//!
//! [`TaskFn`] is implemented for every `Fn` of up to ten [`Param`]s, [`TaskFnWith`] for
//! every `Fn` of one value handed in by the graph (a parallel-for's chunk range, a dynamic
//! task's child) followed by up to ten `Param`s. Both bounds of each impl are Bevy's
//! trick: `Fn(P1, ..)` names the parameter types so they can be inferred from the
//! closure's annotations, and `Fn(P1::Item<'_>, ..)` says the closure accepts them for any
//! lifetime of a run, which is what lets the graph call it with guards it has just taken.

use crate::param::{Declared, Param};
use crate::task::TaskContext;

/// A closure whose every parameter is a [`Param`]; what a task, a parallel-for's range or
/// a dynamic task's body is. `M` only tells the impls for each arity apart.
pub trait TaskFn<Out, M>: Send + Sync + 'static {
    /// Adds every parameter's access to `out`.
    #[doc(hidden)]
    fn declare(out: &mut Declared);

    /// Fetches every parameter and calls the closure.
    #[doc(hidden)]
    fn call(&self, cx: &TaskContext<'_>) -> Out;
}

/// A closure of a value `In` handed in by the graph (a parallel-for's chunk range, a
/// dynamic task's child) followed by [`Param`]s. `M` only tells the impls for each arity
/// apart.
pub trait TaskFnWith<In, M>: Send + Sync + 'static {
    /// Adds every parameter's access to `out`.
    #[doc(hidden)]
    fn declare(out: &mut Declared);

    /// Fetches every parameter and calls the closure on `input`.
    #[doc(hidden)]
    fn call(&self, input: In, cx: &TaskContext<'_>);
}

macro_rules! impl_task_fn {
    ($($P:ident $p:ident),*) => {
        impl<Out, Func, $($P: Param),*> TaskFn<Out, fn($($P,)*) -> Out> for Func
        where
            Func: Send + Sync + 'static,
            Func: Fn($($P),*) -> Out + Fn($(<$P as Param>::Item<'_>),*) -> Out,
        {
            fn declare(_out: &mut Declared) {
                $(<$P as Param>::declare(_out);)*
            }

            #[inline]
            fn call(&self, _cx: &TaskContext<'_>) -> Out {
                // Calling through a generic function picks the `Fn(Item..)` impl.
                #[allow(clippy::too_many_arguments)]
                fn call_inner<Out, $($P),*>(f: impl Fn($($P),*) -> Out, $($p: $P),*) -> Out {
                    f($($p),*)
                }
                $(let $p = <$P as Param>::fetch(_cx);)*
                call_inner(self, $($p),*)
            }
        }

        impl<In, Func, $($P: Param),*> TaskFnWith<In, fn(In, $($P,)*)> for Func
        where
            Func: Send + Sync + 'static,
            Func: Fn(In, $($P),*) + Fn(In, $(<$P as Param>::Item<'_>),*),
        {
            fn declare(_out: &mut Declared) {
                $(<$P as Param>::declare(_out);)*
            }

            #[inline]
            fn call(&self, input: In, _cx: &TaskContext<'_>) {
                #[allow(clippy::too_many_arguments)]
                fn call_inner<In, $($P),*>(f: impl Fn(In, $($P),*), input: In, $($p: $P),*) {
                    f(input, $($p),*)
                }
                $(let $p = <$P as Param>::fetch(_cx);)*
                call_inner(self, input, $($p),*)
            }
        }
    };
}

impl_task_fn!();
impl_task_fn!(P1 p1);
impl_task_fn!(P1 p1, P2 p2);
impl_task_fn!(P1 p1, P2 p2, P3 p3);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5, P6 p6);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5, P6 p6, P7 p7);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5, P6 p6, P7 p7, P8 p8);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5, P6 p6, P7 p7, P8 p8, P9 p9);
impl_task_fn!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5, P6 p6, P7 p7, P8 p8, P9 p9, P10 p10);
