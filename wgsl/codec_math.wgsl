// Scalar maths of the codec decoder that WGSL lacks or promises too little accuracy for, in f32.
// Kept close to what the PyTorch reference computes: exact (erf) GELU, ELU, and sin/cos of RoPE
// angles far outside [-pi, pi] (WGSL's built-ins only promise accuracy inside it on some GPUs).

// ELU with alpha 1.
fn elu(v: f32) -> f32 {
    return select(exp(min(v, 0.0)) - 1.0, v, v > 0.0);
}

// erf, within about 1 ulp (a minimax fit by N. Juffa, error below 6e-8 over the whole line).
fn erf_f32(a: f32) -> f32 {
    let t = abs(a);
    let s = a * a;
    if (t > 0.927734375) {
        var r = fma(-1.72853470e-5, t, 3.83197126e-4);
        let u = fma(-3.88396438e-3, t, 2.42546219e-2);
        r = fma(r, s, u);
        r = fma(r, t, -1.06777877e-1);
        r = fma(r, t, -6.34846687e-1);
        r = fma(r, t, -1.28717512e-1);
        r = fma(r, t, -t);
        r = 1.0 - exp(r);
        return select(r, -r, a < 0.0);
    }
    var r = -5.96761703e-4;
    r = fma(r, s, 4.99119423e-3);
    r = fma(r, s, -2.67681349e-2);
    r = fma(r, s, 1.12819925e-1);
    r = fma(r, s, -3.76125336e-1);
    r = fma(r, s, 1.28379166e-1);
    return fma(r, a, a);
}

// The exact GELU, x * Phi(x), as torch.nn.functional.gelu(approximate="none").
fn gelu_erf(v: f32) -> f32 {
    return v * 0.5 * (1.0 + erf_f32(v * 0.70710678118654752));
}

// The tanh approximation of GELU (torch's approximate="tanh"), for configs that ask for it.
fn gelu_tanh(v: f32) -> f32 {
    return 0.5 * v * (1.0 + tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
}

// (sin x, cos x) with about 2e-7 absolute error for |x| < 16384: Cody-Waite reduction by pi/2 in
// three parts whose products with the quadrant stay exact, then Cephes' polynomials on [-pi/4, pi/4].
fn sin_cos(x: f32) -> vec2<f32> {
    let k = round(x * 0.63661977236758134);
    let r = ((x - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.54978995489188216e-8;
    let z = r * r;
    let s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
    let c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
    let quadrant = u32(i32(k) & 3);
    if (quadrant == 0u) {
        return vec2<f32>(s, c);
    }
    if (quadrant == 1u) {
        return vec2<f32>(c, -s);
    }
    if (quadrant == 2u) {
        return vec2<f32>(-s, -c);
    }
    return vec2<f32>(-c, s);
}
