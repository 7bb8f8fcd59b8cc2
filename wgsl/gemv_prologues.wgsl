// gemv.wgsl's prologues: how the workgroup builds the input vector x in workgroup memory from the
// early loads (gemv_early_loads.wgsl): plain, SiLU, LayerNorm, adaLN, the attention merge, the noise.
// Module-scope names are gemv.wgsl's (WGSL resolves them in any order).

fn put_x(i: u32, v: f32) {
    if (i < KP) { x_put(i, v); }
}

// Element i's value and square for the norm's sums (0 past K).
fn sum_sq(e: Elem, i: u32) -> vec2<f32> {
    let x = select(0.0, e.x, i < K);
    return vec2<f32>(x, x * x);
}

// The prologue's value of element i (0 past K) once the norm's statistics are known.
fn finished(e: Elem, i: u32, mean: f32, rstd: f32) -> f32 {
    if (i >= K) { return 0.0; }
    if (PROLOGUE == P_SILU) { return silu(e.x); }
    if (!NORMS) { return e.x; }
    var v = (e.x - mean) * rstd;
    if (params.ln_affine != 0u) {
        v = v * vector_value(params.ln_kind, e.w, i) + vector_value(params.ln_kind, e.b, i);
    }
    if (PROLOGUE == P_ADALN) { v = v * (1.0 + e.scale) + e.shift; }
    return v;
}

// P_LOAD, P_SILU, P_LAYERNORM, P_ADALN from the early loads. One pass for the norm: sum and sum of
// squares together (var = E[x^2] - mean^2, in f32; the residual streams here have |mean| well below
// their spread, so the cancellation costs ~1e-7 relative).
fn early_x_into_xs(ids: Ids, v: Inputs) {
    var mean = 0.0;
    var rstd = 1.0;
    if (NORMS) {
        let i = ids.lid;
        let s = sum_sq(v.e0, i) + sum_sq(v.e1, i + WG_SIZE) + sum_sq(v.e2, i + 2u * WG_SIZE)
            + sum_sq(v.e3, i + 3u * WG_SIZE) + sum_sq(v.e4, i + 4u * WG_SIZE) + sum_sq(v.e5, i + 5u * WG_SIZE)
            + sum_sq(v.e6, i + 6u * WG_SIZE) + sum_sq(v.e7, i + 7u * WG_SIZE);
        let sums = workgroup_sum2(s, ids) / f32(K);
        mean = sums.x;
        rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    }
    let i = ids.lid;
    put_x(i, finished(v.e0, i, mean, rstd));
    if (XTURNS > 1u) { put_x(i + WG_SIZE, finished(v.e1, i + WG_SIZE, mean, rstd)); }
    if (XTURNS > 2u) { put_x(i + 2u * WG_SIZE, finished(v.e2, i + 2u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 3u) { put_x(i + 3u * WG_SIZE, finished(v.e3, i + 3u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 4u) { put_x(i + 4u * WG_SIZE, finished(v.e4, i + 4u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 5u) { put_x(i + 5u * WG_SIZE, finished(v.e5, i + 5u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 6u) { put_x(i + 6u * WG_SIZE, finished(v.e6, i + 6u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 7u) { put_x(i + 7u * WG_SIZE, finished(v.e7, i + 7u * WG_SIZE, mean, rstd)); }
}

// The same for inputs too long to hold in registers (K > 2048): loaded here, a turn at a time.
fn late_x_into_xs(ids: Ids) {
    var s = vec2<f32>(0.0);
    for (var i = ids.lid; i < KP; i += WG_SIZE) {
        let e = load_elem(i);
        x_put(i, select(0.0, e.x, i < K));
        s += sum_sq(e, i);
    }
    var mean = 0.0;
    var rstd = 1.0;
    if (NORMS) {
        let sums = workgroup_sum2(s, ids) / f32(K);
        mean = sums.x;
        rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    }
    for (var i = ids.lid; i < KP; i += WG_SIZE) {
        var e = load_elem(i);
        e.x = x_at(i);
        x_put(i, finished(e, i, mean, rstd));
    }
}

// Split-softmax merge (P_ATTN_MERGE): part t = (head, split) left its unnormalised output, its maximum
// score m and its sum l of exp(score - m). Each part's weight is exp(m - M) / L with the head's
// M = max m and L = sum l exp(m - M). The (m, l) pairs go through workgroup memory once.
var<workgroup> part_max: array<f32, 256>;
var<workgroup> merge_weights: array<f32, 256>;  // (head, split): exp(m_split - m_head) / l_head
var<workgroup> head_stats: array<vec2<f32>, 256>;  // per head: (M, L)

// Element i of the merged output from its splits' outputs (splits 0..7; past SPLITS weigh nothing).
fn merged(i: u32, a0: vec4<f32>, a1: vec4<f32>) -> f32 {
    if (i >= K) { return 0.0; }
    let t = (i / params.head_dim) * SPLITS;
    let last = t + SPLITS - 1u;
    let w0 = vec4<f32>(merge_weights[t], merge_weights[min(t + 1u, last)],
                       merge_weights[min(t + 2u, last)], merge_weights[min(t + 3u, last)]);
    let w1 = vec4<f32>(merge_weights[min(t + 4u, last)], merge_weights[min(t + 5u, last)],
                       merge_weights[min(t + 6u, last)], merge_weights[min(t + 7u, last)]);
    let n = vec4<u32>(0u, 1u, 2u, 3u);
    return dot(a0, select(vec4<f32>(0.0), w0, n < vec4<u32>(SPLITS)))
        + dot(a1, select(vec4<f32>(0.0), w1, n + 4u < vec4<u32>(SPLITS)));
}

// A part's (maximum, sum) from its loaded pair: a head's last part is the new key alone
// (attention_step.wgsl), whose sum is 1 and whose maximum is the key's score, left in two halves.
fn part_stats(lid: u32, loaded: vec2<f32>) -> vec2<f32> {
    if (lid % SPLITS == SPLITS - 1u) { return vec2<f32>(loaded.x + loaded.y, 1.0); }
    return loaded;
}

fn attention_merge_into_xs(ids: Ids, v: MergeInputs, first_group: bool) {
    let parts = params.heads * SPLITS;
    let stats = part_stats(ids.lid, v.stats);
    if (ids.lid < parts) { part_max[ids.lid] = stats.x; }
    workgroupBarrier();
    if (ids.lid < params.heads) {
        var m = -3.0e38;
        for (var s = 0u; s < SPLITS; s++) { m = max(m, part_max[ids.lid * SPLITS + s]); }
        head_stats[ids.lid].x = m;
    }
    workgroupBarrier();
    if (ids.lid < parts) {
        merge_weights[ids.lid] = exp(part_max[ids.lid] - head_stats[ids.lid / SPLITS].x);
        part_max[ids.lid] = stats.y * merge_weights[ids.lid];  // now this part's share of L
    }
    workgroupBarrier();
    if (ids.lid < params.heads) {
        var total = 0.0;
        for (var s = 0u; s < SPLITS; s++) { total += part_max[ids.lid * SPLITS + s]; }
        head_stats[ids.lid].y = total;
    }
    workgroupBarrier();
    if (ids.lid < parts) { merge_weights[ids.lid] /= head_stats[ids.lid / SPLITS].y; }
    workgroupBarrier();
    if (EARLY_MERGE) {
        put_x(ids.lid, merged(ids.lid, v.a0, v.a1));
        if (KP > WG_SIZE) { put_x(ids.lid + WG_SIZE, merged(ids.lid + WG_SIZE, v.b0, v.b1)); }
    } else {
        // more splits or elements than the early loads hold: eight splits a turn, loaded here
        for (var i = ids.lid; i < KP; i += WG_SIZE) {
            var value = 0.0;
            if (i < K) {
                let head = i / params.head_dim;
                let d = i % params.head_dim;
                let last = head * SPLITS + SPLITS - 1u;
                for (var s = 0u; s < SPLITS; s += 8u) {
                    let t = head * SPLITS + s;
                    let st = params.part_stride;
                    let a0 = vec4<f32>(src[t * st + d], src[min(t + 1u, last) * st + d],
                                       src[min(t + 2u, last) * st + d], src[min(t + 3u, last) * st + d]);
                    let a1 = vec4<f32>(src[min(t + 4u, last) * st + d], src[min(t + 5u, last) * st + d],
                                       src[min(t + 6u, last) * st + d], src[min(t + 7u, last) * st + d]);
                    let w0 = vec4<f32>(merge_weights[t], merge_weights[min(t + 1u, last)],
                                       merge_weights[min(t + 2u, last)], merge_weights[min(t + 3u, last)]);
                    let w1 = vec4<f32>(merge_weights[min(t + 4u, last)], merge_weights[min(t + 5u, last)],
                                       merge_weights[min(t + 6u, last)], merge_weights[min(t + 7u, last)]);
                    let n = s + vec4<u32>(0u, 1u, 2u, 3u);
                    value += dot(a0, select(vec4<f32>(0.0), w0, n < vec4<u32>(SPLITS)))
                        + dot(a1, select(vec4<f32>(0.0), w1, n + 4u < vec4<u32>(SPLITS)));
                }
            }
            x_put(i, value);
        }
    }
    // The alignment layer: attention_step left the raw scores of the text keys; turn them into
    // probabilities with the merged statistics (one workgroup does it).
    if (params.align != 0u && first_group) {
        let stats = head_stats[params.align_head];
        let row = state[S_FRAMES] * params.align_stride;
        for (var t = ids.lid; t < state[S_TEXT]; t += WG_SIZE) {
            let score = bitcast<f32>(extra_get(row + t));
            extra_set(row + t, bitcast<u32>(exp(score - stats.x) / stats.y));
        }
    }
}

fn prologue(ids: Ids, inputs: Inputs, merge: MergeInputs, first_group: bool) {
    if (READS_SRC) {
        if (EARLY_X) { early_x_into_xs(ids, inputs); } else { late_x_into_xs(ids); }
    } else if (PROLOGUE == P_ATTN_MERGE) {
        attention_merge_into_xs(ids, merge, first_group);
    } else if (PROLOGUE == P_NOISE) {
        let seed = state[S_SEED];
        let frame = state[S_FRAMES];
        let scale = bitcast<f32>(state[S_NOISE_SCALE]);
        for (var i = ids.lid; i < KP; i += WG_SIZE) {
            var v = 0.0;
            if (i < K) { v = noise_value(seed, frame, i) * scale; }
            x_put(i, v);
            if (first_group && i < K) { extra_set(i, bitcast<u32>(v)); }
        }
    }
    // (each invocation reads back only the elements it wrote, so no barrier)
    if (params.write_normed != 0u && first_group) {
        for (var i = ids.lid; i < K; i += WG_SIZE) { dst[params.normed_offset + i] = x_at(i); }
    }
}

