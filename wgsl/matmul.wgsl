// out = a W^T for many rows (the prefill): a is rows x K (f32), W is M x K in the weights (KIND),
// out is rows x M. 64 x 64 output tiles, K in steps of 16 through workgroup memory (8 KiB), each
// invocation 4 x 4 outputs. Constants: KIND, EPILOGUE (0 store, 1 exact GELU, 2 add to out, 3 this
// workgroup's share of K only, stored at out[split][row][col] for matmul_reduce.wgsl to sum).
//
// Split K: a prefill of 64 rows against 512 columns is only 8 tiles, and 8 workgroups walking all of
// K one step at a time leave a large GPU idle (on an H200 the prefill's out-proj and fc2 took 1.7 of
// its 2.75 ms). Workgroup z takes K from z * k_split, so many workgroups share one tile's K.

const WG_SIZE: u32 = 256u;
const TILE: u32 = 64u;
const STEP: u32 = 16u;

struct Params {
    rows: u32, cols: u32, k: u32, word: u32,
    scales: u32, padded: u32, has_bias: u32, bias_kind: u32,
    bias: u32, k_split: u32, _pad1: u32, _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> a_tile: array<f32, STEP * TILE>;  // [k][row]
var<workgroup> w_tile: array<f32, STEP * TILE>;  // [k][col]

// The raw words of four consecutive values of weight row `col` from column k (k a multiple of 4):
// q8, the values' word and the word of their scale; f16, two words; f32, four (zero past the columns).
// They become numbers (w_values) only when they are stored: arithmetic on a loaded value waits for
// the load, which would make the next step's loads cost a memory latency every step.
fn w_raw(col: u32, k: u32) -> vec4<u32> {
    if (col >= params.cols) { return vec4<u32>(0u); }
    if (KIND == KIND_Q8) {
        let word = params.word + col * (params.padded / 4u) + k / 4u;
        return vec4<u32>(weights[word], q8_scale_word(params.scales, col, params.padded, k / 32u), 0u, 0u);
    }
    if (KIND == KIND_F16) {
        let word = params.word + (col * params.k + k) / 2u;
        return vec4<u32>(weights[word], weights[word + 1u], 0u, 0u);
    }
    let word = params.word + col * params.k + k;
    return vec4<u32>(weights[word], weights[word + 1u], weights[word + 2u], weights[word + 3u]);
}

fn w_values(raw: vec4<u32>, col: u32, k: u32) -> vec4<f32> {
    if (KIND == KIND_Q8) {
        return vec4<f32>(unpack4xI8(raw.x)) * q8_scale_value(raw.y, col, params.padded, k / 32u);
    }
    if (KIND == KIND_F16) {
        return vec4<f32>(unpack2x16float(raw.x), unpack2x16float(raw.y));
    }
    return bitcast<vec4<f32>>(raw);
}

fn a4(r: u32, k: u32) -> vec4<f32> {
    if (r >= params.rows) { return vec4<f32>(0.0); }
    let i = r * params.k + k;
    return vec4<f32>(a[i], a[i + 1u], a[i + 2u], a[i + 3u]);
}

fn store(r: u32, c0: u32, split: u32, acc: vec4<f32>) {
    if (r >= params.rows) { return; }
    for (var j = 0u; j < 4u; j++) {
        let c = c0 + 16u * j;
        if (c >= params.cols) { continue; }
        if (EPILOGUE == 3u) {
            out[(split * params.rows + r) * params.cols + c] = acc[j];
            continue;
        }
        var v = acc[j];
        if (params.has_bias != 0u) { v += vector_at(params.bias_kind, params.bias, c); }
        let o = r * params.cols + c;
        if (EPILOGUE == 1u) { v = gelu(v); }
        if (EPILOGUE == 2u) { v += out[o]; }
        out[o] = v;
    }
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let row0 = wg.y * TILE;
    let col0 = wg.x * TILE;
    let tx = lid % 16u;
    let ty = lid / 16u;
    let load_row = lid / 4u;
    let load_k = (lid % 4u) * 4u;
    // rows ty + 16 i (i = 0..3) x columns tx + 16 j (the vector's components): four vec4 accumulators,
    // no dynamically indexed private array (which compilers put in slow local memory)
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);

    // The next step's values are loaded into registers (weights as raw words) before this step's
    // products.
    let k_begin = wg.z * params.k_split;
    let k_end = min(params.k, k_begin + params.k_split);
    var va = a4(row0 + load_row, k_begin + load_k);
    var raw = w_raw(col0 + load_row, k_begin + load_k);
    for (var k0 = k_begin; k0 < k_end; k0 += STEP) {
        let vw = w_values(raw, col0 + load_row, k0 + load_k);
        a_tile[load_k * TILE + load_row] = va.x;
        a_tile[(load_k + 1u) * TILE + load_row] = va.y;
        a_tile[(load_k + 2u) * TILE + load_row] = va.z;
        a_tile[(load_k + 3u) * TILE + load_row] = va.w;
        w_tile[load_k * TILE + load_row] = vw.x;
        w_tile[(load_k + 1u) * TILE + load_row] = vw.y;
        w_tile[(load_k + 2u) * TILE + load_row] = vw.z;
        w_tile[(load_k + 3u) * TILE + load_row] = vw.w;
        workgroupBarrier();
        if (k0 + STEP < k_end) {
            va = a4(row0 + load_row, k0 + STEP + load_k);
            raw = w_raw(col0 + load_row, k0 + STEP + load_k);
        }
        for (var kk = 0u; kk < STEP; kk++) {
            let base = kk * TILE;
            let wv = vec4<f32>(w_tile[base + tx], w_tile[base + tx + 16u], w_tile[base + tx + 32u], w_tile[base + tx + 48u]);
            acc0 += a_tile[base + ty] * wv;
            acc1 += a_tile[base + ty + 16u] * wv;
            acc2 += a_tile[base + ty + 32u] * wv;
            acc3 += a_tile[base + ty + 48u] * wv;
        }
        workgroupBarrier();
    }

    store(row0 + ty, col0 + tx, wg.z, acc0);
    store(row0 + ty + 16u, col0 + tx, wg.z, acc1);
    store(row0 + ty + 32u, col0 + tx, wg.z, acc2);
    store(row0 + ty + 48u, col0 + tx, wg.z, acc3);
}
