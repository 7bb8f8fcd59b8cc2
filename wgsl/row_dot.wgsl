// One matrix row's dot product with the workgroup's input vector `xs`, LANES lanes a row, each lane
// reading 16 bytes of the row at a time (16 q8 values, 8 f16 or 4 f32): shared by gemv.wgsl and
// attention_step.wgsl. The including kernel defines K (the row length), KP (K rounded up to 32: q8 rows
// are padded to it), LANES, `weights` and `var<workgroup> xs: array<vec4<f32>, KP / 4u>`.
//
// x is kept four values an element so that a dot product's sixteen inputs are four 16-byte reads of
// workgroup memory: a robust compiler (naga, Tint) clamps every array index, and four scalar reads
// with four clamps are neither one instruction nor free (in the H200 profile an unchecked build ran
// the step 7% faster; the vec4 reads took back part of that, see bench/results).
//
// A q8 row's share is loaded up front (load_q8_share) when a lane has at most 4 chunks of it, so that
// the loads are in flight while the kernel waits for its gate and its prologue; the kernels issue them
// before their first wait. Other rows load as they go (row_dot_loaded).

const CHUNKS: u32 = KP / 16u;                      // 16-value chunks of a q8 row
const TURNS: u32 = (CHUNKS + LANES - 1u) / LANES;  // chunks per lane
const EARLY_ROWS: bool = TURNS <= 4u;              // q8 row shares loaded up front

// A lane's share of a q8 row: its chunks lane, lane + LANES, ... (at most 4), with their scales.
// The scales stay raw words until share_dot: turning them into numbers here would wait for their loads.
struct RowShare {
    w0: vec4<u32>, w1: vec4<u32>, w2: vec4<u32>, w3: vec4<u32>,
    scale_words: vec4<u32>,  // the words holding each turn's scale
    row: u32,
    q8: bool,                // false: not loaded (an f16 or f32 row, a long row, or no row)
}

// The chunk a lane reads in a turn, kept inside the row so that a turn past its end still reads
// in bounds (its scale is 0).
fn lane_chunk(lane: u32, turn: u32) -> u32 {
    return min(lane + turn * LANES, CHUNKS - 1u);
}

// Row `row` of the q8 matrix at `word` (rows padded to KP) with its scales at `scales`.
fn load_q8_share(word: u32, scales: u32, row: u32, lane: u32) -> RowShare {
    var r: RowShare;
    if (!EARLY_ROWS) { return r; }
    r.q8 = true;
    r.row = row;
    let base = word + row * (KP / 4u);
    r.w0 = weight_words4(base + lane_chunk(lane, 0u) * 4u);
    r.scale_words.x = q8_scale_word(scales, row, KP, lane_chunk(lane, 0u) / 2u);
    if (TURNS > 1u) {
        r.w1 = weight_words4(base + lane_chunk(lane, 1u) * 4u);
        r.scale_words.y = q8_scale_word(scales, row, KP, lane_chunk(lane, 1u) / 2u);
    }
    if (TURNS > 2u) {
        r.w2 = weight_words4(base + lane_chunk(lane, 2u) * 4u);
        r.scale_words.z = q8_scale_word(scales, row, KP, lane_chunk(lane, 2u) / 2u);
    }
    if (TURNS > 3u) {
        r.w3 = weight_words4(base + lane_chunk(lane, 3u) * 4u);
        r.scale_words.w = q8_scale_word(scales, row, KP, lane_chunk(lane, 3u) / 2u);
    }
    return r;
}

// The scale of a lane's turn of its share, 0 for a turn past the row's end (it then adds nothing).
fn share_scale(r: RowShare, lane: u32, turn: u32, word: u32) -> f32 {
    let scale = q8_scale_value(word, r.row, KP, lane_chunk(lane, turn) / 2u);
    return select(0.0, scale, lane + turn * LANES < CHUNKS);
}

// x[i..i + 4] for i a multiple of 4
fn xs4(i: u32) -> vec4<f32> {
    return xs[i / 4u];
}

fn x_put(i: u32, v: f32) {
    xs[i / 4u][i % 4u] = v;
}

fn x_at(i: u32) -> f32 {
    return xs[i / 4u][i % 4u];
}

fn w4(i: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<f32>(weights[i]), bitcast<f32>(weights[i + 1u]),
                     bitcast<f32>(weights[i + 2u]), bitcast<f32>(weights[i + 3u]));
}

fn h2(i: u32) -> vec4<f32> {
    return vec4<f32>(unpack2x16float(weights[i]), unpack2x16float(weights[i + 1u]));
}

fn chunk_dot(w: vec4<u32>, chunk: u32) -> f32 {
    let x = chunk * 16u;
    return q8_dot16(w, xs4(x), xs4(x + 4u), xs4(x + 8u), xs4(x + 12u));
}

// This lane's share of a q8 row's dot product with xs, from its early loads.
fn share_dot(r: RowShare, lane: u32) -> f32 {
    var acc = share_scale(r, lane, 0u, r.scale_words.x) * chunk_dot(r.w0, lane_chunk(lane, 0u));
    if (TURNS > 1u) { acc += share_scale(r, lane, 1u, r.scale_words.y) * chunk_dot(r.w1, lane_chunk(lane, 1u)); }
    if (TURNS > 2u) { acc += share_scale(r, lane, 2u, r.scale_words.z) * chunk_dot(r.w2, lane_chunk(lane, 2u)); }
    if (TURNS > 3u) { acc += share_scale(r, lane, 3u, r.scale_words.w) * chunk_dot(r.w3, lane_chunk(lane, 3u)); }
    return acc;
}

// This lane's share of row `row` of a matrix of any kind (at `word`, q8 scales at `scales`, q8 rows
// padded to `padded`), loading as it goes: f16 and f32 rows, and q8 rows too long for the early loads.
fn row_dot_loaded(kind: u32, word: u32, scales: u32, padded: u32, row: u32, lane: u32) -> f32 {
    var acc = 0.0;
    if (kind == KIND_Q8) {
        let row_base = word + row * (padded / 4u);
        for (var c = lane; c < padded / 16u; c += LANES) {
            acc += chunk_dot(weight_words4(row_base + c * 4u), c) * q8_scale(scales, row, padded, c / 2u);
        }
    } else if (kind == KIND_F16) {
        let row_base = word + row * (K / 2u);
        for (var c = lane; c < K / 8u; c += LANES) {
            let w = row_base + c * 4u;
            let x = c * 8u;
            acc += dot(h2(w), xs4(x)) + dot(h2(w + 2u), xs4(x + 4u));
        }
    } else {
        let row_base = word + row * K;
        for (var c = lane; c < K / 4u; c += LANES) {
            acc += dot(w4(row_base + c * 4u), xs4(c * 4u));
        }
    }
    return acc;
}
