//! The graph while `GraphBuilder::build` flattens it: subgraphs copied in as groups of
//! tasks between an entry and an exit join, then (`finish`) packed into the flat arrays of
//! a [`GraphInner`] (see `graph.rs`). The access check over it is in `conflict.rs`.

use std::collections::BTreeMap;

use joule_jobs::ThreadToken;

use crate::access::AccessDecl;
use crate::error::BuildError;
use crate::graph::{GraphInner, GroupDef, TaskDef};
use crate::task::Body;

/// The graph while it is being flattened: one entry per task, successors as lists.
#[derive(Default)]
pub(crate) struct Flat {
    pub(crate) names: Vec<String>,
    bodies: Vec<Body>,
    /// Each task's declared access: one entry per resource.
    pub(crate) accesses: Vec<Vec<AccessDecl>>,
    threads: Vec<Option<ThreadToken>>,
    groups_of: Vec<Option<u32>>,
    pub(crate) succ: Vec<Vec<usize>>,
    groups: Vec<GroupDef>,
}

impl Flat {
    pub(crate) fn push(
        &mut self,
        name: String,
        body: Body,
        mut accesses: Vec<AccessDecl>,
        thread: Option<ThreadToken>,
        group: Option<u32>,
    ) -> usize {
        // One entry per resource; a write covers a read of the same resource.
        accesses.sort_by(|a, b| a.type_id.cmp(&b.type_id).then(b.mode.cmp(&a.mode)));
        accesses.dedup_by_key(|a| a.type_id);
        self.names.push(name);
        self.bodies.push(body);
        self.accesses.push(accesses);
        self.threads.push(thread);
        self.groups_of.push(group);
        self.succ.push(Vec::new());
        self.names.len() - 1
    }

    /// Copies `child` in as group `name`, between an entry and an exit join; returns
    /// (entry, exit). The child's own groups (its subgraphs) nest inside the new group.
    pub(crate) fn embed(&mut self, name: &str, child: &GraphInner) -> (usize, usize) {
        let group = self.groups.len() as u32;
        let group_base = group + 1;
        self.groups.push(GroupDef {
            name: name.into(),
            parent: None,
        });
        for g in child.groups.iter() {
            self.groups.push(GroupDef {
                name: format!("{name}/{}", g.name).into(),
                parent: Some(g.parent.map_or(group, |p| p + group_base)),
            });
        }
        let entry = self.push(name.to_owned(), Body::Join, Vec::new(), None, Some(group));
        let base = self.names.len();
        for (i, t) in child.tasks.iter().enumerate() {
            let g = t.group.map_or(group, |g| g + group_base);
            let accesses = child.accesses_of(i as u32).to_vec();
            self.push(
                format!("{name}/{}", t.name),
                t.body.clone(),
                accesses,
                t.thread,
                Some(g),
            );
        }
        let exit = self.push(
            format!("{name} (end)"),
            Body::Join,
            Vec::new(),
            None,
            Some(group),
        );
        for (i, _) in child.tasks.iter().enumerate() {
            let succ = child.successors(i as u32);
            if child.initial_deps[i] == 0 {
                self.succ[entry].push(base + i);
            }
            if succ.is_empty() {
                self.succ[base + i].push(exit);
            }
            self.succ[base + i].extend(succ.iter().map(|&s| base + s as usize));
        }
        if child.tasks.is_empty() {
            self.succ[entry].push(exit);
        }
        (entry, exit)
    }

    pub(crate) fn check_names(&self) -> Result<(), BuildError> {
        let mut seen = BTreeMap::new();
        for name in &self.names {
            if seen.insert(name.as_str(), ()).is_some() {
                return Err(BuildError::DuplicateName { name: name.clone() });
            }
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> GraphInner {
        let n = self.names.len();
        let mut initial_deps = vec![0u32; n];
        let mut successors = Vec::new();
        let mut all_accesses = Vec::new();
        let mut tasks = Vec::with_capacity(n);
        let mut slots = 0u32;
        let mut resources: Vec<(AccessDecl, u32)> = Vec::new();
        for (t, ((((name, body), accesses), thread), group)) in self
            .names
            .into_iter()
            .zip(self.bodies)
            .zip(self.accesses)
            .zip(self.threads)
            .zip(self.groups_of)
            .enumerate()
        {
            let mut succ = self.succ[t].clone();
            succ.sort_unstable();
            succ.dedup();
            for &s in &succ {
                initial_deps[s] += 1;
            }
            let succ_range = (
                successors.len() as u32,
                (successors.len() + succ.len()) as u32,
            );
            successors.extend(succ.iter().map(|&s| s as u32));
            for a in &accesses {
                if !resources.iter().any(|(r, _)| r.type_id == a.type_id) {
                    resources.push((*a, t as u32));
                }
            }
            let access_range = (
                all_accesses.len() as u32,
                (all_accesses.len() + accesses.len()) as u32,
            );
            all_accesses.extend(accesses);
            let slot = match body {
                Body::ParallelFor { .. } | Body::Dynamic { .. } => {
                    slots += 1;
                    slots - 1
                }
                _ => u32::MAX,
            };
            tasks.push(TaskDef {
                name: name.into(),
                body,
                thread,
                succ: succ_range,
                access: access_range,
                slot,
                group,
            });
        }
        let roots = (0..n as u32)
            .filter(|&t| initial_deps[t as usize] == 0)
            .collect();
        GraphInner {
            tasks: tasks.into(),
            successors: successors.into(),
            accesses: all_accesses.into(),
            initial_deps: initial_deps.into(),
            roots,
            resources: resources.into(),
            groups: self.groups.into(),
            slots: slots as usize,
        }
    }
}
