//! The access check of `GraphBuilder::build`: any two tasks where one writes a resource
//! the other touches must be ordered by a path of edges, or the graph is rejected with a
//! [`BuildError::Conflict`] naming both and the resource.
//!
//! It costs one forward and one backward traversal per writer of each resource that has
//! more than one user; tasks that declare nothing cost nothing.

use std::any::TypeId;
use std::collections::BTreeMap;

use crate::access::AccessMode;
use crate::error::BuildError;
use crate::flat::Flat;

/// Per resource: its type name and its users with their modes, in task order.
type Users = BTreeMap<TypeId, (&'static str, Vec<(usize, AccessMode)>)>;

impl Flat {
    /// Every pair of tasks where one writes a resource the other touches must be ordered
    /// by a path. For each writer: mark what it reaches forward and backward, then look at
    /// the resource's other users.
    pub(crate) fn check_access(&self) -> Result<(), BuildError> {
        let n = self.names.len();
        // Users of each resource, resources in order of first declaration.
        let mut order: Vec<TypeId> = Vec::new();
        let mut users: Users = BTreeMap::new();
        for (t, accesses) in self.accesses.iter().enumerate() {
            for a in accesses {
                let e = users.entry(a.type_id).or_insert_with(|| {
                    order.push(a.type_id);
                    (a.type_name, Vec::new())
                });
                e.1.push((t, a.mode));
            }
        }
        if order.is_empty() {
            return Ok(());
        }
        let mut preds = vec![Vec::new(); n];
        for (v, ss) in self.succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(v);
            }
        }
        let mut fwd = vec![0u32; n];
        let mut bwd = vec![0u32; n];
        let mut stamp = 0u32;
        let mut stack = Vec::new();
        for id in order {
            let (resource, list) = &users[&id];
            for &(w, wmode) in list {
                if wmode != AccessMode::Write || list.len() < 2 {
                    continue;
                }
                stamp += 1;
                mark(w, &self.succ, &mut fwd, stamp, &mut stack);
                mark(w, &preds, &mut bwd, stamp, &mut stack);
                for &(a, amode) in list {
                    // A pair of writers is looked at once, from the earlier one.
                    if a == w || (amode == AccessMode::Write && a < w) {
                        continue;
                    }
                    if fwd[a] != stamp && bwd[a] != stamp {
                        let ((first, fm), (second, sm)) = if w < a {
                            ((w, wmode), (a, amode))
                        } else {
                            ((a, amode), (w, wmode))
                        };
                        return Err(BuildError::Conflict {
                            first: self.names[first].clone(),
                            first_mode: fm,
                            second: self.names[second].clone(),
                            second_mode: sm,
                            resource,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// Marks with `stamp` every task reachable from `from` along `edges` (not `from` itself
/// unless a cycle returns to it, which `build` has ruled out).
fn mark(from: usize, edges: &[Vec<usize>], marks: &mut [u32], stamp: u32, stack: &mut Vec<usize>) {
    stack.clear();
    stack.push(from);
    while let Some(v) = stack.pop() {
        for &s in &edges[v] {
            if marks[s] != stamp {
                marks[s] = stamp;
                stack.push(s);
            }
        }
    }
}
