// Portable maths for the language model: WGSL's sin/cos/log/exp have implementation-defined accuracy
// (Vulkan allows 2^-11 absolute for cos), and erf does not exist. These use only +, *, / and bit
// operations (Cephes-style range reduction and polynomials), so every GPU gives nearly the same bits.

// (sin x, cos x) for |x| < 8192, to about 1e-7 absolute.
fn sincos(x: f32) -> vec2<f32> {
    let ax = abs(x);
    var j = u32(ax * 1.2732395447351628);  // 4 / pi
    var y = f32(j);
    if ((j & 1u) == 1u) { j += 1u; y += 1.0; }
    j = j & 7u;
    // extended-precision reduction: x - y * pi/4 with pi/4 in three parts
    let r = ((ax - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
    let z = r * r;
    let s = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
    let c = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
    // octant j (even, 0..6): sin and cos from the two polynomials
    var sin_v: f32;
    var cos_v: f32;
    if (j == 0u) { sin_v = s; cos_v = c; }
    else if (j == 2u) { sin_v = c; cos_v = -s; }
    else if (j == 4u) { sin_v = -s; cos_v = -c; }
    else { sin_v = -c; cos_v = s; }
    return vec2<f32>(select(sin_v, -sin_v, x < 0.0), cos_v);
}

// Natural logarithm of x > 0 (normal numbers), to about 1 ulp.
fn log_f32(x: f32) -> f32 {
    let bits = bitcast<u32>(x);
    var e = i32((bits >> 23u) & 0xffu) - 126;
    var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
    if (m < 0.70710678118654752) { e -= 1; m = m + m - 1.0; } else { m = m - 1.0; }
    let z = m * m;
    var y = ((((((((7.0376836292e-2 * m - 1.1514610310e-1) * m + 1.1676998740e-1) * m - 1.2420140846e-1) * m
        + 1.4249322787e-1) * m - 1.6668057665e-1) * m + 2.0000714765e-1) * m - 2.4999993993e-1) * m
        + 3.3333331174e-1) * m * z;
    let fe = f32(e);
    y += -2.12194440e-4 * fe;
    y += -0.5 * z;
    return m + y + 0.693359375 * fe;
}

// exp(x) for the activations; WGSL's exp is accurate enough (3 + 2|x| ulp) where these use it.
fn erf_f32(x: f32) -> f32 {
    // erfc from Numerical Recipes' Chebyshev fit (fractional error < 1.2e-7), erf = 1 - erfc.
    let z = abs(x);
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let erfc = t * exp(poly);
    return select(erfc - 1.0, 1.0 - erfc, x >= 0.0);
}

fn gelu(x: f32) -> f32 {
    return 0.5 * x * (1.0 + erf_f32(x * 0.70710678118654752));
}

fn silu(x: f32) -> f32 {
    return x / (1.0 + exp(-x));
}

// PCG hash (O'Neill's RXS-M-XS output on one LCG step).
fn pcg(v: u32) -> u32 {
    let s = v * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

// Standard normal noise for (seed, frame, channel): two PCG hashes through Box-Muller.
// phonon_web.lm.noise() is its twin in Python.
fn noise_value(seed: u32, frame: u32, channel: u32) -> f32 {
    let base = pcg(pcg(seed) + frame);
    let h1 = pcg(base + 2u * channel);
    let h2 = pcg(base + 2u * channel + 1u);
    let u1 = (f32(h1 >> 8u) + 0.5) * 5.9604644775390625e-8;  // (0, 1)
    let u2 = f32(h2 >> 8u) * 5.9604644775390625e-8;          // [0, 1)
    let radius = sqrt(-2.0 * log_f32(u1));
    return radius * sincos(6.2831853071795865 * u2).y;
}

// RoPE on one pair (a, b) of interleaved dimensions (2j, 2j + 1), cs = (cos, sin) of its angle.
fn rope_rotate(a: f32, b: f32, cs: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a * cs.x - b * cs.y, b * cs.x + a * cs.y);
}
