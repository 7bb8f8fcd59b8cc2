// LayerNorm of each row (prefill): y = (x - mean) / sqrt(var + eps) * w + b. One workgroup per row.
// Constant: HIDDEN.

const WG_SIZE: u32 = 256u;

struct Params { kind: u32, w: u32, b: u32, eps: f32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn main(ids: Ids) {
    let base = ids.wg.x * HIDDEN;
    var s = 0.0;
    for (var i = ids.lid; i < HIDDEN; i += WG_SIZE) { s += x[base + i]; }
    let mean = workgroup_sum(s, ids) / f32(HIDDEN);
    var q = 0.0;
    for (var i = ids.lid; i < HIDDEN; i += WG_SIZE) { let d = x[base + i] - mean; q += d * d; }
    let rstd = 1.0 / sqrt(workgroup_sum(q, ids) / f32(HIDDEN) + params.eps);
    for (var i = ids.lid; i < HIDDEN; i += WG_SIZE) {
        y[base + i] = (x[base + i] - mean) * rstd * vector_at(params.kind, params.w, i) + vector_at(params.kind, params.b, i);
    }
}
