// joule's recording viewer: plays what `examples/src/viewer.rs` serves (see its module
// docs for the data layout). three.js draws the bodies, one instanced mesh per distinct
// shape, so a frame costs one matrix per body and a few draw calls, not one per body.
//
// URL parameters: frame=N|last (start frame), play=0|1, color=body|island|sleep,
// contacts=0|1. The page sets document.title to "joule viewer: ready" once the first
// frame is on screen (the browser test waits for that).

import * as THREE from 'three';
import { OrbitControls } from './vendor/OrbitControls.js';

const POSE = 7;
const CONTACT = 7;
const SLEEPING = 0x80000000;
const STATIC = 0x40000000;
const REMOVED = 0x20000000;
const ISLAND_MASK = 0x1fffffff;

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);

async function fetchBuffer(path) {
  const r = await fetch(path);
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.arrayBuffer();
}

// The same golden-ratio hue walk as joule_physics::debug_draw::Color::from_key.
function colorFromKey(key, out) {
  const hue = ((key * 0.618034) % 1) * 6;
  const x = 1 - Math.abs((hue % 2) - 1);
  const [r, g, b] = [[1, x, 0], [x, 1, 0], [0, 1, x], [0, x, 1], [x, 0, 1], [1, 0, x]][Math.min(5, Math.floor(hue))];
  const c = (v) => (60 + v * 195) / 255;
  return out.setRGB(c(r), c(g), c(b), THREE.SRGBColorSpace);
}

function shapeGeometry(shape) {
  switch (shape.kind) {
    case 'box':
      return new THREE.BoxGeometry(2 * shape.half[0], 2 * shape.half[1], 2 * shape.half[2]);
    case 'sphere':
      return new THREE.SphereGeometry(shape.radius, 24, 16);
    case 'capsule':
      return new THREE.CapsuleGeometry(shape.radius, 2 * shape.halfHeight, 8, 16);
    case 'cylinder':
      return new THREE.CylinderGeometry(shape.radius, shape.radius, 2 * shape.halfHeight, 24);
    case 'hull': {
      const pos = [];
      for (const face of shape.faces) {
        for (let k = 1; k + 1 < face.length; k++) {
          for (const v of [face[0], face[k], face[k + 1]]) pos.push(...shape.vertices[v]);
        }
      }
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
      g.computeVertexNormals();
      return g;
    }
    case 'mesh': {
      // Meshes and heightfields: the recorded triangles, shared vertices indexed.
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.Float32BufferAttribute(shape.vertices.flat(), 3));
      g.setIndex(shape.triangles.flat());
      g.computeVertexNormals();
      return g;
    }
    case 'compound': {
      // The children's geometries moved to their poses and joined into one, so a
      // compound body stays one instance of one InstancedMesh like every other body.
      const pos = [];
      for (const child of shape.children) {
        const built = shapeGeometry(child.shape);
        const g = built.index ? built.toNonIndexed() : built;
        g.applyQuaternion(new THREE.Quaternion(...child.rotation));
        g.translate(...child.position);
        pos.push(...g.getAttribute('position').array);
        g.dispose();
      }
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
      g.computeVertexNormals();
      return g;
    }
    case 'halfspace': {
      const g = new THREE.PlaneGeometry(200, 200, 1, 1);
      const n = new THREE.Vector3(...shape.normal);
      g.applyQuaternion(new THREE.Quaternion().setFromUnitVectors(new THREE.Vector3(0, 0, 1), n));
      g.translate(n.x * shape.offset, n.y * shape.offset, n.z * shape.offset);
      return g;
    }
    default: {
      const [a, b] = [shape.min, shape.max];
      const g = new THREE.BoxGeometry(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
      g.translate((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2);
      return g;
    }
  }
}

async function main() {
  const [scene, poseBuf, stateBuf, contactBuf] = await Promise.all([
    fetch('scene.json').then((r) => r.json()),
    fetchBuffer('poses.bin'),
    fetchBuffer('states.bin'),
    fetchBuffer('contacts.bin'),
  ]);
  const poses = new Float32Array(poseBuf);
  const states = new Uint32Array(stateBuf);
  const contactData = new Float32Array(contactBuf);
  const bodies = scene.bodies;
  const nb = bodies.length;
  const frames = scene.frames;

  // Renderer, camera, lights.
  const view = $('view');
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio);
  view.appendChild(renderer.domElement);
  const world = new THREE.Scene();
  world.background = new THREE.Color(0x16181d);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.05, 2000);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = true;
  world.add(new THREE.HemisphereLight(0xffffff, 0x404050, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.8);
  sun.position.set(0.4, 1, 0.7);
  world.add(sun);
  // 5 cm below y = 0, so a ground whose top is y = 0 hides it instead of z-fighting.
  const grid = new THREE.GridHelper(200, 200, 0x3a3f4a, 0x262a31);
  grid.position.y = -0.05;
  world.add(grid);

  // One instanced mesh per distinct shape.
  const groups = new Map();
  const slotOf = new Array(nb);
  bodies.forEach((b, i) => {
    const key = JSON.stringify(b.shape);
    let g = groups.get(key);
    if (!g) {
      g = { shape: b.shape, members: [] };
      groups.set(key, g);
    }
    slotOf[i] = [g, g.members.length];
    g.members.push(i);
  });
  for (const g of groups.values()) {
    const material = new THREE.MeshStandardMaterial({ roughness: 0.75, metalness: 0.0, side: THREE.DoubleSide });
    g.mesh = new THREE.InstancedMesh(shapeGeometry(g.shape), material, g.members.length);
    g.mesh.frustumCulled = false;
    g.mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    world.add(g.mesh);
  }

  // Contacts: points and normals, rebuilt per frame.
  const maxPoints = Math.max(1, ...frames.map((f) => f.contactCount));
  const pointGeo = new THREE.BufferGeometry();
  pointGeo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(maxPoints * 3), 3));
  const contactPoints = new THREE.Points(pointGeo, new THREE.PointsMaterial({ color: 0xff3030, size: 5, sizeAttenuation: false, depthTest: false }));
  const normalGeo = new THREE.BufferGeometry();
  normalGeo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(maxPoints * 6), 3));
  const contactNormals = new THREE.LineSegments(normalGeo, new THREE.LineBasicMaterial({ color: 0x30e060, depthTest: false }));
  contactPoints.renderOrder = contactNormals.renderOrder = 1;
  world.add(contactPoints, contactNormals);

  // State.
  const last = frames.length - 1;
  let frame = params.get('frame') === 'last' ? last : Math.min(last, Math.max(0, parseInt(params.get('frame') || '0', 10) || 0));
  let playing = params.get('play') !== '0' && params.get('frame') === null;
  let colorMode = params.get('color') || 'body';
  let showContacts = params.get('contacts') === '1';
  let clock = 0;
  $('colorMode').value = colorMode;
  $('contacts').checked = showContacts;
  $('scrub').max = String(last);

  const m = new THREE.Matrix4();
  const p = new THREE.Vector3();
  const q = new THREE.Quaternion();
  const one = new THREE.Vector3(1, 1, 1);
  const zero = new THREE.Vector3(0, 0, 0);
  const color = new THREE.Color();
  const grey = new THREE.Color(0x8a8f99);
  const sleepBlue = new THREE.Color(0x3c50a0);
  const awakeWhite = new THREE.Color(0xe8e8e8);
  const kinematic = new THREE.Color(0xfa8c1e);

  function bodyColor(i, state) {
    const b = bodies[i];
    if (b.motion === 0 || state & STATIC) return grey;
    const sleeping = (state & SLEEPING) !== 0;
    if (colorMode === 'sleep') return sleeping ? sleepBlue : b.motion === 1 ? kinematic : awakeWhite;
    if (colorMode === 'island') return colorFromKey(sleeping ? (state & ISLAND_MASK) * 7919 : state & ISLAND_MASK, color);
    return sleeping ? sleepBlue : colorFromKey(b.index, color);
  }

  function showFrame(f) {
    const base = f * nb;
    for (let i = 0; i < nb; i++) {
      const [g, k] = slotOf[i];
      const o = (base + i) * POSE;
      const state = states[base + i];
      if (Number.isNaN(poses[o]) || state & REMOVED) {
        m.compose(zero, q.identity(), zero);
      } else {
        p.set(poses[o], poses[o + 1], poses[o + 2]);
        q.set(poses[o + 3], poses[o + 4], poses[o + 5], poses[o + 6]);
        m.compose(p, q, one);
      }
      g.mesh.setMatrixAt(k, m);
      g.mesh.setColorAt(k, bodyColor(i, state));
    }
    for (const g of groups.values()) {
      g.mesh.instanceMatrix.needsUpdate = true;
      if (g.mesh.instanceColor) g.mesh.instanceColor.needsUpdate = true;
    }
    const fr = frames[f];
    const pts = pointGeo.attributes.position.array;
    const lines = normalGeo.attributes.position.array;
    for (let c = 0; c < fr.contactCount; c++) {
      const o = (fr.contactStart + c) * CONTACT;
      const [x, y, z, nx, ny, nz] = contactData.subarray(o, o + 6);
      pts.set([x, y, z], c * 3);
      lines.set([x, y, z, x + 0.3 * nx, y + 0.3 * ny, z + 0.3 * nz], c * 6);
    }
    pointGeo.setDrawRange(0, fr.contactCount);
    normalGeo.setDrawRange(0, 2 * fr.contactCount);
    pointGeo.attributes.position.needsUpdate = true;
    normalGeo.attributes.position.needsUpdate = true;
    contactPoints.visible = contactNormals.visible = showContacts;
    $('scrub').value = String(f);
    $('frameLabel').textContent = `${f} / ${last}`;
    const ms = fr.wallNs == null ? '' : `  step ${(fr.wallNs / 1e6).toFixed(2)} ms`;
    $('hud').textContent = `step ${fr.step}  bodies ${nb}  contact points ${fr.contactCount}${ms}`;
    drawFrameStrip();
    requestTrace(f);
    follow(f);
  }

  // `?follow=N`: the camera keeps its offset from body N (a character), moving with it.
  const followParam = params.get('follow');
  const followed = followParam === null ? -1 : bodies.findIndex((b) => b.index === parseInt(followParam, 10));
  const followedAt = new THREE.Vector3();
  let following = false;
  function follow(f) {
    if (followed < 0) return;
    const o = (f * nb + followed) * POSE;
    if (Number.isNaN(poses[o])) return;
    const at = new THREE.Vector3(poses[o], poses[o + 1], poses[o + 2]);
    if (following) {
      const d = at.clone().sub(followedAt);
      controls.target.add(d);
      camera.position.add(d);
    } else {
      controls.target.copy(at);
      following = true;
    }
    followedAt.copy(at);
  }

  // Frame the bodies that move (or everything, if nothing does) at the start frame; the
  // followed body and 8 m around it when there is one.
  function fitCamera(f) {
    const box = new THREE.Box3();
    if (followed >= 0) {
      const o = (f * nb + followed) * POSE;
      const c = new THREE.Vector3(poses[o], poses[o + 1], poses[o + 2]);
      box.set(c.clone().subScalar(4), c.clone().addScalar(4));
    }
    const dynamicOnly = bodies.some((b) => b.motion !== 0);
    for (let i = 0; i < nb && followed < 0; i++) {
      if (dynamicOnly && bodies[i].motion === 0) continue;
      if (bodies[i].shape.kind === 'halfspace') continue;
      const o = (f * nb + i) * POSE;
      if (Number.isNaN(poses[o])) continue;
      box.expandByPoint(p.set(poses[o], poses[o + 1], poses[o + 2]));
    }
    if (box.isEmpty()) box.set(new THREE.Vector3(-5, 0, -5), new THREE.Vector3(5, 5, 5));
    const sphere = box.getBoundingSphere(new THREE.Sphere());
    const r = Math.max(1, sphere.radius + 1);
    const dist = r / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2));
    controls.target.copy(sphere.center);
    camera.position.copy(sphere.center).add(new THREE.Vector3(0.25, 0.3, 1).normalize().multiplyScalar(dist));
    camera.near = dist / 20;
    camera.far = dist * 100;
    camera.updateProjectionMatrix();
    controls.update();
  }

  // The timeline strip: each frame's step time (when traced), the current frame marked.
  const strip = $('frames');
  strip.addEventListener('click', (e) => {
    const r = strip.getBoundingClientRect();
    setFrame(Math.round(((e.clientX - r.left) / r.width) * last));
  });
  function drawFrameStrip() {
    const w = (strip.width = strip.clientWidth);
    const h = strip.height;
    const ctx = strip.getContext('2d');
    ctx.fillStyle = '#1b1d22';
    ctx.fillRect(0, 0, w, h);
    const max = Math.max(1, ...frames.map((fr) => fr.wallNs || 0));
    ctx.fillStyle = '#4f7cc4';
    frames.forEach((fr, i) => {
      const bh = ((fr.wallNs || 0) / max) * (h - 4);
      ctx.fillRect((i / Math.max(1, last)) * (w - 2), h - bh, Math.max(1, w / frames.length), bh);
    });
    ctx.fillStyle = '#ffd24a';
    ctx.fillRect((frame / Math.max(1, last)) * (w - 2), 0, 2, h);
  }

  // The frame's trace: one lane per thread, spans coloured by stage.
  const traces = new Map();
  let wanted = -1;
  let inFlight = false;
  async function requestTrace(f) {
    wanted = f;
    if (traces.has(f)) return drawTrace(traces.get(f), f);
    if (inFlight) return;
    inFlight = true;
    try {
      while (!traces.has(wanted)) {
        const n = wanted;
        traces.set(n, await fetch(`trace/${n}.json`).then((r) => r.json()));
      }
    } finally {
      inFlight = false;
    }
    drawTrace(traces.get(wanted), wanted);
  }
  function drawTrace(t, f) {
    const cv = $('trace');
    const w = (cv.width = cv.clientWidth);
    const h = (cv.height = cv.clientHeight);
    const ctx = cv.getContext('2d');
    ctx.fillStyle = '#111318';
    ctx.fillRect(0, 0, w, h);
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#9aa3b2';
    if (!t) {
      ctx.fillText(`frame ${f}: no trace recorded`, 8, 16);
      return;
    }
    const lanes = Math.max(1, t.threads.length);
    const top = 18;
    const laneH = Math.min(36, (h - top - 4) / lanes);
    const left = 90;
    const scale = (w - left - 8) / Math.max(1, t.wallNs);
    ctx.fillText(`frame ${f}: ${(t.wallNs / 1e6).toFixed(3)} ms, ${t.spans.length} jobs on ${lanes} threads`, 8, 12);
    t.threads.forEach((name, i) => ctx.fillText(name.slice(0, 14), 4, top + i * laneH + laneH / 2 + 4));
    for (const [label, thread, start, end] of t.spans) {
      const x = left + start * scale;
      const sw = Math.max(1, (end - start) * scale);
      const y = top + thread * laneH;
      ctx.fillStyle = `#${colorFromKey(label + 3, color).getHexString(THREE.SRGBColorSpace)}`;
      ctx.fillRect(x, y + 1, sw, laneH - 2);
      if (sw > 40) {
        ctx.fillStyle = '#111';
        ctx.fillText(t.labels[label].slice(0, Math.floor(sw / 6)), x + 2, y + laneH / 2 + 4);
      }
    }
  }

  function setFrame(f) {
    frame = Math.min(last, Math.max(0, f));
    showFrame(frame);
  }

  // Controls.
  const playButton = $('play');
  const setPlaying = (on) => {
    playing = on;
    playButton.textContent = on ? '⏸' : '▶';
  };
  playButton.onclick = () => setPlaying(!playing || frame === last ? (frame === last ? (setFrame(0), true) : true) : false);
  $('back').onclick = () => (setPlaying(false), setFrame(frame - 1));
  $('fwd').onclick = () => (setPlaying(false), setFrame(frame + 1));
  $('scrub').oninput = (e) => (setPlaying(false), setFrame(parseInt(e.target.value, 10)));
  $('colorMode').onchange = (e) => ((colorMode = e.target.value), showFrame(frame));
  $('contacts').onchange = (e) => ((showContacts = e.target.checked), showFrame(frame));
  window.addEventListener('keydown', (e) => {
    if (e.key === ' ') (setPlaying(!playing), e.preventDefault());
    else if (e.key === 'ArrowLeft') $('back').click();
    else if (e.key === 'ArrowRight') $('fwd').click();
  });

  function resize() {
    const w = view.clientWidth;
    const h = view.clientHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(1, h);
    camera.updateProjectionMatrix();
    drawFrameStrip();
  }
  window.addEventListener('resize', resize);

  fitCamera(frame);
  resize();
  setPlaying(playing);
  showFrame(frame);

  let previous = performance.now();
  let announced = false;
  renderer.setAnimationLoop((now) => {
    const elapsed = (now - previous) / 1000;
    previous = now;
    if (playing) {
      clock += elapsed * parseFloat($('speed').value);
      const steps = Math.floor(clock / scene.dt);
      if (steps > 0) {
        clock -= steps * scene.dt;
        if (frame + steps >= last) setPlaying(false);
        setFrame(frame + steps);
      }
    }
    controls.update();
    renderer.render(world, camera);
    if (!announced) {
      announced = true;
      document.title = 'joule viewer: ready';
    }
  });
}

main().catch((e) => {
  $('hud').textContent = `error: ${e.message}`;
  document.title = 'joule viewer: error';
  console.error(e);
});
