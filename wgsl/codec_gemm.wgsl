// The codec decoder's matrix products: its linear layers, convolutions and transposed convolutions,
// each as one tiled GEMM that gathers its inputs and never scatters.
//
//   out[m][n] = epilogue( sum_k A[m][k] * B[n][k] )
//
// A is read from `x` (rows of activations, `x_ld` values each), B from the weights blob in the
// checkpoint's own layout:
//   * linear (GATHER false): A[m][k] = x[x_row0 + m][k], B = W[n][k] (nn.Linear, or a 1-tap conv).
//     With LN, A's rows are LayerNorm'ed as they load (the stats come from a prologue).
//   * conv (GATHER true, TAPS taps): K = in x taps with k = i * taps + t,
//     A[m][k] = x[x_row0 + m + t * dil][i] and B = W[n][k], the Conv1d weight [out][in][taps] as it is stored. `x` holds the stage's left
//     context in its first rows, so output row m reads input rows m .. m + (taps - 1) * dil.
//   * transposed conv (TRANSPOSED, kernel 2s, stride s): one GEMM per output phase (workgroup z):
//     out[s*m + phase][o] = sum_i x[m][i] W[i][o][phase + s] + x[m + 1][i] W[i][o][phase], i.e. the conv
//     gather with 2 taps (t = 0 the previous input row, kept as context, t = 1 the current one). B is
//     row phase * cols + o of the weight as build_weights.convtr_phases stores it ([s * out][in][2],
//     k = 2i + t), so it reads like any other GEMM's B.
// GELU_TANH picks the tanh approximation for EPI_GELU (Pocket TTS's codec uses the exact one).
// ELU_A applies ELU to A as it loads (every SEANet conv but the first reads ELU of its input).
//
// Tiles of 64 x 64 outputs, 256 threads with 4 x 4 each, K in steps of 32 with A and B in workgroup
// memory as vec4 along K (2 x 8 KiB; B swizzled against bank conflicts, see main). Every thread writes
// whole vec4s of the tiles: WGSL may store a whole vector when one component is written, so threads
// must never share a vec4 they each fill in part.
//
// Split-K (SPLIT): workgroup z = split * phases + phase covers K in [split * k_split, ...) and writes
// its raw sums to `y` as partials [split][phase][rows][cols]; the `reduce` entry point then adds the
// splits in order and applies the epilogue. SPLIT_LOOP makes the same sums in one workgroup a tile:
// it runs through all of K, starts each split's sums from zero and adds them to the total in split
// order, then applies the epilogue. It is for chunks with tiles enough to fill the GPU unsplit (no
// partials written and read back, no second dispatch). A layer's split count never depends on the
// chunk's size and both ways add the same numbers in the same order, so the decode is bit for bit the
// same for every chunk schedule.

const EPI_STORE: u32 = 0u;     // y = acc + bias
const EPI_GELU: u32 = 1u;      // y = gelu(acc + bias)
const EPI_SCALED: u32 = 2u;    // y += vec[n] * (acc + bias): the transformer's residual with its layer scale
const EPI_RESIDUAL: u32 = 3u;  // y = r[r_row0 + m][n] + (acc + bias): the SEANet residual block
const EPI_QKV: u32 = 4u;       // q (rotated) to y; k (rotated) and v into the key/value ring

const NO_TENSOR: u32 = 3u;     // a kind code meaning "no such tensor" (no bias, no scale)

struct Params {
    rows: u32,           // M: output rows (input rows of a transposed conv) of this chunk
    cols: u32,           // N
    depth: u32,          // K
    k_split: u32,        // K per split (a multiple of 32; >= depth without split-K)
    splits: u32,
    dil: u32,
    x_ld: u32,
    x_row0: u32,
    w_word: u32,
    w_scales: u32,
    w_cols: u32,         // the stored row length of W (values)
    w_padded: u32,       // q8: the padded row length
    phases: u32,         // transposed conv: the stride s; 1 otherwise
    y_ld: u32,
    y_row0: u32,
    y_step: u32,         // output row of (m, phase) = y_row0 + m * y_step + phase
    bias_kind: u32,
    bias_word: u32,
    vec_kind: u32,
    vec_word: u32,
    ln_kind: u32,
    ln_w: u32,
    ln_b: u32,
    eps: f32,
    r_ld: u32,
    r_row0: u32,
    rows_per_frame: u32, // positions: row m of the chunk is at rows_per_frame * start + m
    hidden: u32,
    head_dim: u32,
    ring_size: u32,
    ring_k: u32,         // word offsets of this layer's keys and values in `ring`
    ring_v: u32,
    frame_word: u32,
    end_word: u32,
    avail_word: u32,
    _pad0: u32,          // inv_freq starts on 16 bytes
    inv_freq: array<vec4<f32>, 16>,  // RoPE inverse frequencies (EPI_QKV)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read> r: array<f32>;
@group(0) @binding(5) var<storage, read_write> ring: array<f32>;
@group(0) @binding(6) var<storage, read> state: array<u32>;

var<workgroup> a_tile: array<vec4<f32>, 512>;  // [64 rows][8 vec4 of K]
var<workgroup> b_tile: array<vec4<f32>, 512>;  // [64 cols][8 vec4 of K]

fn act(v: f32) -> f32 {
    if (ELU_A) {
        return elu(v);
    }
    return v;
}

// ---- loading A and B ------------------------------------------------------------------------------
// Each K step's values are loaded as raw words into registers during the step before (the `*_raw`
// functions) and turned into values (ELU, LayerNorm, int8 scales, f16 halves) only when they are
// stored into workgroup memory (`*_values`). Arithmetic on a loaded value waits for the load, so
// doing it where the load is issued would stall the warp there for a full memory latency every step,
// before the step's products: the prefetch would hide nothing.

// One value of x for A's row `row`, K index kc.
fn x_at(row: u32, kc: u32) -> f32 {
    if (GATHER) {
        let i = kc / TAPS;  // a constant: no integer division in the inner loads
        let t = kc - i * TAPS;
        return x[(p.x_row0 + row + t * p.dil) * p.x_ld + i];
    }
    return x[(p.x_row0 + row) * p.x_ld + kc];
}

// Four raw values of A's row `row` from k on (zero past the rows or past kend).
fn a_raw(row: u32, k: u32, kend: u32) -> vec4<f32> {
    var out = vec4<f32>(0.0);
    if (row >= p.rows) {
        return out;
    }
    if (k + 4u <= kend) {
        return vec4<f32>(x_at(row, k), x_at(row, k + 1u), x_at(row, k + 2u), x_at(row, k + 3u));
    }
    if (k < kend) {
        out.x = x_at(row, k);
    }
    if (k + 1u < kend) {
        out.y = x_at(row, k + 1u);
    }
    if (k + 2u < kend) {
        out.z = x_at(row, k + 2u);
    }
    return out;
}

// The words of elements k..k + 3 of a small f16 or f32 vector (k % 4 == 0): two words or four.
fn vector_words(kind: u32, base: u32, k: u32) -> vec4<u32> {
    if (kind == KIND_F16) {
        let at = base + k / 2u;
        return vec4<u32>(weights[at], weights[at + 1u], 0u, 0u);
    }
    return vec4<u32>(weights[base + k], weights[base + k + 1u], weights[base + k + 2u], weights[base + k + 3u]);
}

fn vector_values(kind: u32, words: vec4<u32>) -> vec4<f32> {
    if (kind == KIND_F16) {
        return vec4<f32>(unpack2x16float(words.x), unpack2x16float(words.y));
    }
    return bitcast<vec4<f32>>(words);
}

// A's four values from the raw ones: LayerNorm (`ln` = its weights and biases' words), then ELU;
// zero where the raw loads were skipped (past the rows or past kend).
fn a_values(raw: vec4<f32>, row: u32, k: u32, kend: u32, mean: f32, rstd: f32, ln: array<vec4<u32>, 2>)
    -> vec4<f32> {
    var v = raw;
    if (LN) {
        v = (v - mean) * rstd * vector_values(p.ln_kind, ln[0]) + vector_values(p.ln_kind, ln[1]);
    }
    v = vec4<f32>(act(v.x), act(v.y), act(v.z), act(v.w));
    let live = row < p.rows;
    return select(vec4<f32>(0.0), v, vec4<bool>(live && k < kend, live && k + 1u < kend,
                                                 live && k + 2u < kend, live && k + 3u < kend));
}

// B's row (in the weight) of output column `col`.
fn b_row(col: u32, phase: u32) -> u32 {
    if (TRANSPOSED) {
        return phase * p.cols + col;
    }
    return col;
}

// The raw words of four values of B's column `col` from k on: q8, the word of four int8 values in
// x and its scale pair's word in y (z: which half); f16 and f32, each value's word (zero past kend).
fn b_raw(col: u32, k: u32, kend: u32, phase: u32) -> vec4<u32> {
    if (col >= p.cols) {
        return vec4<u32>(0u);
    }
    let row = b_row(col, phase);
    if (WKIND == KIND_Q8) {
        // Rows are zero-padded to a multiple of 32 and K tiles never pass the padding; A is zero past K.
        let index = row * (p.w_padded / 32u) + k / 32u;
        return vec4<u32>(weights[p.w_word + row * (p.w_padded / 4u) + k / 4u], weights[p.w_scales + index / 2u],
                         index & 1u, 0u);
    }
    var out = vec4<u32>(0u);
    let e = row * p.w_cols + k;
    let per_word = select(1u, 2u, WKIND == KIND_F16);
    if (k < kend) {
        out.x = weights[p.w_word + e / per_word];
    }
    if (k + 1u < kend) {
        out.y = weights[p.w_word + (e + 1u) / per_word];
    }
    if (k + 2u < kend) {
        out.z = weights[p.w_word + (e + 2u) / per_word];
    }
    if (k + 3u < kend) {
        out.w = weights[p.w_word + (e + 3u) / per_word];
    }
    return out;
}

// B's four values from the raw words.
fn b_values(raw: vec4<u32>, col: u32, k: u32, phase: u32) -> vec4<f32> {
    if (WKIND == KIND_Q8) {
        return vec4<f32>(unpack4xI8(raw.x)) * f16_half(raw.y, raw.z == 1u);
    }
    if (WKIND == KIND_F16) {
        let e = b_row(col, phase) * p.w_cols + k;  // a skipped load's word is 0: its value 0 either half
        return vec4<f32>(f16_half(raw.x, (e & 1u) == 1u), f16_half(raw.y, ((e + 1u) & 1u) == 1u),
                         f16_half(raw.z, ((e + 2u) & 1u) == 1u), f16_half(raw.w, ((e + 3u) & 1u) == 1u));
    }
    return bitcast<vec4<f32>>(raw);
}

fn rotate(pair: vec2<f32>, pos: u32, j: u32) -> vec2<f32> {
    let sc = sin_cos(f32(pos) * p.inv_freq[j / 4u][j % 4u]);
    return vec2<f32>(pair.x * sc.y - pair.y * sc.x, pair.y * sc.y + pair.x * sc.x);
}

fn with_bias(v: f32, col: u32) -> f32 {
    if (p.bias_kind != NO_TENSOR) {
        return v + vector_at(p.bias_kind, p.bias_word, col);
    }
    return v;
}

// One output of the QKV product: q to y, k and v into the ring at the row's position.
fn store_qkv_one(m: u32, col: u32, v: f32, slot: u32) {
    let hidden = p.hidden;
    if (col < hidden) {
        y[m * p.y_ld + col] = v;
    } else if (col < 2u * hidden) {
        ring[p.ring_k + slot * hidden + col - hidden] = v;
    } else if (col < 3u * hidden) {
        ring[p.ring_v + slot * hidden + col - 2u * hidden] = v;
    }
}

// q, k and v of one row, four columns from n (n % 4 == 0). The checkpoint keeps q and k rows as
// interleaved rotary pairs (2j, 2j + 1), so each pair lies inside one thread's four columns. Queries
// and keys stay in that order: their dot products do not depend on it.
fn store_qkv(m: u32, n: u32, acc: vec4<f32>, start: u32) {
    let pos = p.rows_per_frame * start + m;
    var v = vec4<f32>(with_bias(acc.x, n), with_bias(acc.y, n + 1u), with_bias(acc.z, n + 2u),
                      with_bias(acc.w, n + 3u));
    if (n < 2u * p.hidden) {
        let j = (n % p.head_dim) / 2u;
        v = vec4<f32>(rotate(v.xy, pos, j), rotate(v.zw, pos, j + 1u));
    }
    let slot = pos % p.ring_size;
    store_qkv_one(m, n, v.x, slot);
    store_qkv_one(m, n + 1u, v.y, slot);
    store_qkv_one(m, n + 2u, v.z, slot);
    store_qkv_one(m, n + 3u, v.w, slot);
}

// The epilogue of one output (row m < rows of the chunk, column col).
fn finish_one(m: u32, col: u32, phase: u32, acc: f32) {
    if (col >= p.cols) {
        return;
    }
    let at = (p.y_row0 + m * p.y_step + phase) * p.y_ld + col;
    var out = with_bias(acc, col);
    if (EPI == EPI_GELU) {
        if (GELU_TANH) {
            out = gelu_tanh(out);
        } else {
            out = gelu_erf(out);
        }
    } else if (EPI == EPI_SCALED) {
        out = y[at] + vector_at(p.vec_kind, p.vec_word, col) * out;
    } else if (EPI == EPI_RESIDUAL) {
        out = r[(p.r_row0 + m) * p.r_ld + col] + out;
    }
    y[at] = out;
}

// The epilogue of four columns from n of output row m (m < rows).
fn finish(m: u32, n: u32, phase: u32, acc: vec4<f32>, start: u32) {
    if (EPI == EPI_QKV) {
        store_qkv(m, n, acc, start);
        return;
    }
    finish_one(m, n, phase, acc.x);
    finish_one(m, n + 1u, phase, acc.y);
    finish_one(m, n + 2u, phase, acc.z);
    finish_one(m, n + 3u, phase, acc.w);
}

// Four values of x from `at + k`, k clamped to the row's last four (turns past the end are masked).
fn row_quad(at: u32, k: u32) -> vec4<f32> {
    let c = at + min(k, p.depth - 4u);
    return vec4<f32>(x[c], x[c + 1u], x[c + 2u], x[c + 3u]);
}

// One turn's (sum d, sum d^2) of two rows, d = value - the row's pivot; zero for a turn past the end
// or a row past the chunk (adding zero leaves the sums as they were: the same sums, bit for bit).
fn stats_turn(
    r0: vec4<f32>, r1: vec4<f32>, pivot: vec2<f32>, on: bool, live0: bool, live1: bool,
) -> vec4<f32> {
    let d0 = select(vec4<f32>(0.0), r0 - pivot.x, on && live0);
    let d1 = select(vec4<f32>(0.0), r1 - pivot.y, on && live1);
    return vec4<f32>(d0.x + d0.y + d0.z + d0.w, dot(d0, d0), d1.x + d1.y + d1.z + d1.w, dot(d1, d1));
}

// One row's four sums over four values of K: acc[c] += x . w_c as four fused multiply-adds a column,
// k in order. (A dot product and an add per column cost a multiply, three fused adds and an add: a
// fifth more instructions in the loop that does all the work.)
fn fma_row(acc: vec4<f32>, x: vec4<f32>, w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>)
    -> vec4<f32> {
    var a = fma(vec4<f32>(x.x), vec4<f32>(w0.x, w1.x, w2.x, w3.x), acc);
    a = fma(vec4<f32>(x.y), vec4<f32>(w0.y, w1.y, w2.y, w3.y), a);
    a = fma(vec4<f32>(x.z), vec4<f32>(w0.z, w1.z, w2.z, w3.z), a);
    return fma(vec4<f32>(x.w), vec4<f32>(w0.w, w1.w, w2.w, w3.w), a);
}

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) li: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let phase = wg.z % p.phases;
    let split = wg.z / p.phases;
    let m0 = wg.y * 64u;
    let n0 = wg.x * 64u;
    var kbeg = split * p.k_split;
    var kend = min(p.depth, kbeg + p.k_split);
    if (SPLIT_LOOP) {
        kbeg = 0u;
        kend = p.depth;
    }

    let row = m0 + lid / 8u;  // the A rows this thread loads: row and row + 32
    let col = n0 + lid / 8u;  // the B columns: col and col + 32
    let quad = (lid % 8u) * 4u;
    // The next K step's raw words are loaded into registers before this step's products and made
    // into values only at the next store, so their latency hides behind the arithmetic instead of
    // stalling every step (workgroup memory holds one step: 16 KiB is the portable limit). The first
    // step's are loaded before the LayerNorm statistics below, whose own loads they need not wait for.
    var a_next0 = vec4<f32>(0.0);
    var a_next1 = vec4<f32>(0.0);
    var ln_next = array<vec4<u32>, 2>(vec4<u32>(0u), vec4<u32>(0u));
    var b_next0 = vec4<u32>(0u);
    var b_next1 = vec4<u32>(0u);
    if (kbeg < kend) {
        a_next0 = a_raw(row, kbeg + quad, kend);
        a_next1 = a_raw(row + 32u, kbeg + quad, kend);
        if (LN) {
            ln_next = array<vec4<u32>, 2>(vector_words(p.ln_kind, p.ln_w, kbeg + quad),
                                          vector_words(p.ln_kind, p.ln_b, kbeg + quad));
        }
        b_next0 = b_raw(col, kbeg + quad, kend, phase);
        b_next1 = b_raw(col + 32u, kbeg + quad, kend, phase);
    }
    // Only now the state: its loads and the ones above are in flight together, where checking it
    // first made every GEMM wait a memory latency before it loaded anything. (A chunk past the end
    // has loaded a tile it never uses: rows inside the bindings, for a few microseconds.)
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }

    // LayerNorm statistics of the two rows this thread loads (lid / 8 and lid / 8 + 32) in one pass:
    // sums of d and d * d with d = x - x[row][0] (shifting by a value of the row keeps the one-pass
    // variance accurate when the mean is large). The 8 threads of each row pair sum interleaved
    // quarters (LN needs depth % 4 == 0), then each adds the 8 parts in the same order.
    var mean = vec2<f32>(0.0);
    var rstd = vec2<f32>(0.0);
    if (LN) {
        let pair = lid / 8u;
        let part = lid % 8u;
        let base0 = (p.x_row0 + m0 + pair) * p.x_ld;
        let base1 = base0 + 32u * p.x_ld;
        let live0 = m0 + pair < p.rows;
        let live1 = m0 + pair + 32u < p.rows;
        // Rows past the end read a clamped row (every read stays inside the binding) and are masked.
        let pivot = vec2<f32>(x[base0], x[base1]);
        var sums = vec4<f32>(0.0);  // (sum d, sum d^2) of row 0, then of row 1
        // Four turns' loads first, then their sums: a load's first use stalls every later load, so
        // loading where used paid one memory latency per turn and row (32 in a row for 512 values).
        for (var k = part * 4u; k < p.depth; k += 128u) {
            let r0 = row_quad(base0, k);
            let r1 = row_quad(base1, k);
            let r2 = row_quad(base0, k + 32u);
            let r3 = row_quad(base1, k + 32u);
            let r4 = row_quad(base0, k + 64u);
            let r5 = row_quad(base1, k + 64u);
            let r6 = row_quad(base0, k + 96u);
            let r7 = row_quad(base1, k + 96u);
            sums += stats_turn(r0, r1, pivot, k < p.depth, live0, live1);
            sums += stats_turn(r2, r3, pivot, k + 32u < p.depth, live0, live1);
            sums += stats_turn(r4, r5, pivot, k + 64u < p.depth, live0, live1);
            sums += stats_turn(r6, r7, pivot, k + 96u < p.depth, live0, live1);
        }
        a_tile[lid] = sums;
        workgroupBarrier();
        var total = vec4<f32>(0.0);
        for (var q = 0u; q < 8u; q++) {
            total += a_tile[pair * 8u + q];
        }
        let n = f32(p.depth);
        let shift = vec2<f32>(total.x, total.z) / n;
        mean = pivot + shift;
        let variance = max(vec2<f32>(total.y, total.w) / n - shift * shift, vec2<f32>(0.0));
        rstd = 1.0 / sqrt(variance + p.eps);
        workgroupBarrier();
    }

    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    var total0 = vec4<f32>(0.0);  // SPLIT_LOOP: the splits' sums so far
    var total1 = vec4<f32>(0.0);
    var total2 = vec4<f32>(0.0);
    var total3 = vec4<f32>(0.0);
    let a0 = (li.y * 4u) * 8u;
    let b0 = (li.x * 4u) * 8u;
    // B's K vectors are stored XOR-swizzled within each column ([col][kv ^ (col / 4 % 8)]): the 8 threads
    // of a quarter warp read columns 4 apart, which unswizzled all fall in one bank (an 8-way conflict
    // on every B read); swizzled, they read 8 different banks. A's reads are broadcasts: no conflict.
    let b_swizzle = li.x % 8u;  // (this thread's columns) / 4 % 8
    let b_slot = (lid & ~7u) | ((lid & 7u) ^ ((lid / 32u) % 8u));  // where this thread's B load goes
    for (var k0 = kbeg; k0 < kend; k0 += 32u) {
        let kq = k0 + quad;
        a_tile[lid] = a_values(a_next0, row, kq, kend, mean.x, rstd.x, ln_next);
        a_tile[lid + 256u] = a_values(a_next1, row + 32u, kq, kend, mean.y, rstd.y, ln_next);
        b_tile[b_slot] = b_values(b_next0, col, kq, phase);
        b_tile[b_slot + 256u] = b_values(b_next1, col + 32u, kq, phase);
        workgroupBarrier();
        let k1 = k0 + 32u;
        if (k1 < kend) {
            a_next0 = a_raw(row, k1 + quad, kend);
            a_next1 = a_raw(row + 32u, k1 + quad, kend);
            if (LN) {
                ln_next = array<vec4<u32>, 2>(vector_words(p.ln_kind, p.ln_w, k1 + quad),
                                              vector_words(p.ln_kind, p.ln_b, k1 + quad));
            }
            b_next0 = b_raw(col, k1 + quad, kend, phase);
            b_next1 = b_raw(col + 32u, k1 + quad, kend, phase);
        }
        for (var kk = 0u; kk < 8u; kk++) {
            let kb = kk ^ b_swizzle;
            let w0 = b_tile[b0 + kb];
            let w1 = b_tile[b0 + 8u + kb];
            let w2 = b_tile[b0 + 16u + kb];
            let w3 = b_tile[b0 + 24u + kb];
            let x0 = a_tile[a0 + kk];
            let x1 = a_tile[a0 + 8u + kk];
            let x2 = a_tile[a0 + 16u + kk];
            let x3 = a_tile[a0 + 24u + kk];
            acc0 = fma_row(acc0, x0, w0, w1, w2, w3);
            acc1 = fma_row(acc1, x1, w0, w1, w2, w3);
            acc2 = fma_row(acc2, x2, w0, w1, w2, w3);
            acc3 = fma_row(acc3, x3, w0, w1, w2, w3);
        }
        if (SPLIT_LOOP && (k1 % p.k_split == 0u || k1 >= kend)) {  // a split's end: into the total
            total0 += acc0;
            total1 += acc1;
            total2 += acc2;
            total3 += acc3;
            acc0 = vec4<f32>(0.0);
            acc1 = vec4<f32>(0.0);
            acc2 = vec4<f32>(0.0);
            acc3 = vec4<f32>(0.0);
        }
        workgroupBarrier();
    }
    if (SPLIT_LOOP) {
        acc0 = total0;
        acc1 = total1;
        acc2 = total2;
        acc3 = total3;
    }

    let n = n0 + li.x * 4u;
    if (n >= p.cols) {
        return;
    }
    let m = m0 + li.y * 4u;
    store(m, n, phase, split, acc0, start);
    store(m + 1u, n, phase, split, acc1, start);
    store(m + 2u, n, phase, split, acc2, start);
    store(m + 3u, n, phase, split, acc3, start);
}

// A thread's result for four columns of row m: split-K partials, or the epilogue.
fn store(m: u32, n: u32, phase: u32, split: u32, acc: vec4<f32>, start: u32) {
    if (m >= p.rows) {
        return;
    }
    if (SPLIT) {
        let base = ((split * p.phases + phase) * p.rows + m) * p.cols + n;
        y[base] = acc.x;
        if (n + 1u < p.cols) {
            y[base + 1u] = acc.y;
        }
        if (n + 2u < p.cols) {
            y[base + 2u] = acc.z;
        }
        if (n + 3u < p.cols) {
            y[base + 3u] = acc.w;
        }
    } else {
        finish(m, n, phase, acc, start);
    }
}

// Split-K: add the partials (bound as `x`) of each output in split order, then the epilogue.
// One thread per four columns of a row; workgroup z is the phase.
@compute @workgroup_size(256, 1, 1)
fn reduce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }
    let quads = (p.cols + 3u) / 4u;
    let m = gid.x / quads;
    let n = (gid.x % quads) * 4u;
    if (m >= p.rows) {
        return;
    }
    let phase = wg.z;
    var v = vec4<f32>(0.0);
    // Four splits' partials loaded before the first is added (a load's first use stalls the loads
    // after it: one at a time paid a memory latency per split), then added in split order.
    for (var s = 0u; s < p.splits; s += 4u) {
        let p0 = partial_quad(s, phase, m, n);
        let p1 = partial_quad(s + 1u, phase, m, n);
        let p2 = partial_quad(s + 2u, phase, m, n);
        let p3 = partial_quad(s + 3u, phase, m, n);
        v += p0;
        if (s + 1u < p.splits) {
            v += p1;
        }
        if (s + 2u < p.splits) {
            v += p2;
        }
        if (s + 3u < p.splits) {
            v += p3;
        }
    }
    finish(m, n, phase, v, start);
}

// Split s's partial sums of row m, columns n..n + 3 (a split past the last reads the last one again,
// columns past the end the row's last value: neither is ever used).
fn partial_quad(s: u32, phase: u32, m: u32, n: u32) -> vec4<f32> {
    let base = ((min(s, p.splits - 1u) * p.phases + phase) * p.rows + m) * p.cols;
    let last = p.cols - 1u;
    return vec4<f32>(x[base + n], x[base + min(n + 1u, last)], x[base + min(n + 2u, last)],
                     x[base + min(n + 3u, last)]);
}
