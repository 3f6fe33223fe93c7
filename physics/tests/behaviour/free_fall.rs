//! Free fall against the integrator's closed form.

use crate::common::{DT, G, world};
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;

#[test]
fn free_fall_matches_the_substepped_semi_implicit_euler_closed_form() {
    // The integrator is semi-implicit Euler with N substeps of h = dt / N:
    //   v_k = v_{k-1} - g h,  y_k = y_{k-1} + h v_k
    // so after n substeps from rest: v_n = -g h n and y_n = y_0 - g h^2 n (n + 1) / 2.
    let mut w = world(1);
    let substeps = w.desc().solver.substeps as f64;
    let id = w
        .create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::ZERO))
        .unwrap();
    for step in 1..=120u32 {
        w.step(DT);
        let n = step as f64 * substeps;
        let h = DT as f64 / substeps;
        let y = -(G as f64) * h * h * n * (n + 1.0) / 2.0;
        let v = -(G as f64) * h * n;
        let p = w.position(id).unwrap();
        // Tolerance: the 1e-5 m at every step (19.6 m of fall by step 120). The
        // solver sums velocities with Kahan compensation; plain f32 sums drift 1.5e-4 m.
        let tol = 1e-5;
        assert!(
            (p.y as f64 - y).abs() < tol,
            "step {step}: y = {} expected {y} (tolerance {tol})",
            p.y
        );
        assert!((w.linear_velocity(id).unwrap().y as f64 - v).abs() < 1e-4);
        assert_eq!(p.x, 0.0);
        assert_eq!(p.z, 0.0);
    }
}
