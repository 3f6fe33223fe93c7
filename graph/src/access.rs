//! Typed resources and declared access.
//!
//! A [`Context`] is a type map: at most one value of each type, each behind its own
//! `RwLock`. A graph run lends the context to its tasks; a task reaches a resource only
//! through a [`Read`] or [`Write`] parameter, which declared the access when the task was
//! added and takes the lock when it runs (see `param.rs`).
//!
//! Invariant: `GraphBuilder::build` rejects any two tasks that are not ordered by edges
//! when either writes what the other touches. So in a valid graph no two tasks that may run
//! at the same time want the same lock in conflicting modes, and every lock is taken
//! uncontended (one atomic operation). The locks exist so that the accessor is safe Rust,
//! not to serialise anything. The exceptions are within one task: the chunks of a
//! parallel-for and the children of a dynamic task run under their task's declaration, so
//! chunks that all `write` the same resource take turns (give them per-item slots, or
//! per-block locks aligned with the chunk grain, instead).

use std::any::{Any, TypeId, type_name};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// How a task touches a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessMode {
    /// Shared access: any number of readers may run at the same time.
    Read,
    /// Exclusive access: the task may also read.
    Write,
}

/// One declared access of a task: a resource type and a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AccessDecl {
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) mode: AccessMode,
}

impl AccessDecl {
    pub(crate) fn of<T: 'static>(mode: AccessMode) -> Self {
        Self {
            type_id: TypeId::of::<T>(),
            type_name: type_name::<T>(),
            mode,
        }
    }
}

struct Entry {
    type_id: TypeId,
    type_name: &'static str,
    /// A `RwLock<T>` for the `T` of `type_id`.
    value: Box<dyn Any + Send + Sync>,
}

/// The resources a graph's tasks work on: at most one value per type.
///
/// Build it once, [`insert`](Self::insert) what the tasks declare, and pass it to every
/// [`Graph::run`](crate::Graph::run). Between runs the owner reaches the values directly
/// with [`get_mut`](Self::get_mut). Entries are kept sorted by type id, so lookups are a
/// binary search and nothing depends on hash order.
#[derive(Default)]
pub struct Context {
    entries: Vec<Entry>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.type_name))
            .finish()
    }
}

impl Context {
    /// An empty context.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The context with `value` added (builder style).
    #[must_use]
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    fn find(&self, id: TypeId) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| e.type_id.cmp(&id))
    }

    /// Inserts `value`, returning the previous value of that type if there was one.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let id = TypeId::of::<T>();
        let boxed: Box<dyn Any + Send + Sync> = Box::new(RwLock::new(value));
        match self.find(id) {
            Ok(i) => {
                let old = std::mem::replace(&mut self.entries[i].value, boxed);
                Some(unwrap_lock::<T>(old))
            }
            Err(i) => {
                self.entries.insert(
                    i,
                    Entry {
                        type_id: id,
                        type_name: type_name::<T>(),
                        value: boxed,
                    },
                );
                None
            }
        }
    }

    /// Removes and returns the value of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let i = self.find(TypeId::of::<T>()).ok()?;
        Some(unwrap_lock::<T>(self.entries.remove(i).value))
    }

    /// Whether a value of type `T` is present.
    #[must_use]
    pub fn contains<T: 'static>(&self) -> bool {
        self.contains_id(TypeId::of::<T>())
    }

    pub(crate) fn contains_id(&self, id: TypeId) -> bool {
        self.find(id).is_ok()
    }

    /// Number of resources.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the context holds no resource.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Direct access to the value of type `T` (no lock: `&mut self` proves exclusivity).
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        let i = self.find(TypeId::of::<T>()).ok()?;
        let lock = self.entries[i].value.downcast_mut::<RwLock<T>>()?;
        Some(lock.get_mut().unwrap_or_else(PoisonError::into_inner))
    }

    /// Shared access to the value of type `T` through its lock.
    #[must_use]
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Read<'_, T>> {
        self.lock::<T>()
            .map(|l| Read(l.read().unwrap_or_else(PoisonError::into_inner)))
    }

    fn lock<T: 'static>(&self) -> Option<&RwLock<T>> {
        let i = self.find(TypeId::of::<T>()).ok()?;
        self.entries[i].value.downcast_ref::<RwLock<T>>()
    }

    /// Locks `T` for reading. A panic in a task that held the lock does not poison it for
    /// later runs: the run re-raises that panic, and the value is left as the task left it.
    pub(crate) fn read_locked<T: Send + Sync + 'static>(&self) -> Option<Read<'_, T>> {
        self.get::<T>()
    }

    /// Locks `T` for writing (see [`read_locked`](Self::read_locked) on poisoning).
    pub(crate) fn write_locked<T: Send + Sync + 'static>(&self) -> Option<Write<'_, T>> {
        self.lock::<T>()
            .map(|l| Write(l.write().unwrap_or_else(PoisonError::into_inner)))
    }

    /// Moves the resources out, leaving this context empty (no allocation).
    pub(crate) fn take(&mut self) -> Context {
        Context {
            entries: std::mem::take(&mut self.entries),
        }
    }
}

fn unwrap_lock<T: 'static>(value: Box<dyn Any + Send + Sync>) -> T {
    let lock = value
        .downcast::<RwLock<T>>()
        .unwrap_or_else(|_| unreachable!("joule-graph: context entry of the wrong type"));
    lock.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// Shared access to a resource, held until dropped.
pub struct Read<'a, T>(RwLockReadGuard<'a, T>);

impl<T> Deref for Read<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for Read<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// Exclusive access to a resource, held until dropped.
pub struct Write<'a, T>(RwLockWriteGuard<'a, T>);

impl<T> Deref for Write<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Write<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for Write<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replace_remove_and_lookup_by_type() {
        let mut ctx = Context::new().with(1u32).with(String::from("a"));
        assert_eq!(ctx.len(), 2);
        assert_eq!(ctx.insert(2u32), Some(1));
        assert_eq!(*ctx.get::<u32>().unwrap(), 2);
        ctx.get_mut::<String>().unwrap().push('b');
        assert_eq!(ctx.remove::<String>().as_deref(), Some("ab"));
        assert!(!ctx.contains::<String>());
        assert!(ctx.get::<u64>().is_none());
        *ctx.write_locked::<u32>().unwrap() += 1;
        assert_eq!(*ctx.read_locked::<u32>().unwrap(), 3);
    }
}
