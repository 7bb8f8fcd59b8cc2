// gemv.wgsl's early loads: what each invocation reads before its first wait (see gemv.wgsl's header
// for why). Module-scope names (params, weights, src, aux, dst, state and the constants) are gemv.wgsl's;
// WGSL resolves them in any order, and lm_ops puts this file before gemv.wgsl.

// A lane's share of a q8 row (RowShare, row_dot.wgsl), when the row is q8 and short enough.
fn load_row_share(row: u32, lane: u32) -> RowShare {
    var r: RowShare;
    if (!EARLY_ROWS || row >= params.rows) { return r; }
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    if (seg.kind != KIND_Q8) { return r; }
    // every q8 segment of a gemv is padded to KP (lm_ops checks)
    return load_q8_share(seg.word, seg.scales, where_.y, lane);
}

// What the prologue needs of element i of x, as loaded (the loads stay in bounds: past K they read
// element K - 1, and the prologue counts it as 0). The norm's weight and bias stay raw words
// (vector_value turns them into numbers where they are used: doing it here would wait for the load).
struct Elem { x: f32, w: u32, b: u32, scale: f32, shift: f32 }

fn load_elem(i: u32) -> Elem {
    let j = min(i, K - 1u);
    var e = Elem(src[params.src_offset + j], 0u, 0u, 0.0, 0.0);
    if (NORMS && params.ln_affine != 0u) {
        e.w = vector_word(params.ln_kind, params.ln_w, j);
        e.b = vector_word(params.ln_kind, params.ln_b, j);
    }
    if (PROLOGUE == P_ADALN) {
        e.scale = aux[params.mod_scale + j];
        e.shift = aux[params.mod_shift + j];
    }
    return e;
}

// An invocation's elements lid, lid + 256, ... (XTURNS of them, at most 8).
struct Inputs { e0: Elem, e1: Elem, e2: Elem, e3: Elem, e4: Elem, e5: Elem, e6: Elem, e7: Elem }

fn load_inputs(lid: u32) -> Inputs {
    var v: Inputs;
    if (!READS_SRC || !EARLY_X) { return v; }
    v.e0 = load_elem(lid);
    if (XTURNS > 1u) { v.e1 = load_elem(lid + WG_SIZE); }
    if (XTURNS > 2u) { v.e2 = load_elem(lid + 2u * WG_SIZE); }
    if (XTURNS > 3u) { v.e3 = load_elem(lid + 3u * WG_SIZE); }
    if (XTURNS > 4u) { v.e4 = load_elem(lid + 4u * WG_SIZE); }
    if (XTURNS > 5u) { v.e5 = load_elem(lid + 5u * WG_SIZE); }
    if (XTURNS > 6u) { v.e6 = load_elem(lid + 6u * WG_SIZE); }
    if (XTURNS > 7u) { v.e7 = load_elem(lid + 7u * WG_SIZE); }
    return v;
}

// P_ATTN_MERGE: one element's outputs of its head's splits 0..7 (a split past SPLITS reads the last
// one again; its weight is 0), and this invocation's part's (max, sum) when it has one.
struct MergeInputs { a0: vec4<f32>, a1: vec4<f32>, b0: vec4<f32>, b1: vec4<f32>, stats: vec2<f32> }

fn split_outputs(i: u32) -> array<vec4<f32>, 2> {
    let j = min(i, K - 1u);
    let head = j / params.head_dim;
    let d = j % params.head_dim;
    let t = head * SPLITS;
    let last = t + SPLITS - 1u;
    let s = params.part_stride;
    return array<vec4<f32>, 2>(
        vec4<f32>(src[t * s + d], src[min(t + 1u, last) * s + d],
                  src[min(t + 2u, last) * s + d], src[min(t + 3u, last) * s + d]),
        vec4<f32>(src[min(t + 4u, last) * s + d], src[min(t + 5u, last) * s + d],
                  src[min(t + 6u, last) * s + d], src[min(t + 7u, last) * s + d]));
}

fn load_merge_inputs(lid: u32) -> MergeInputs {
    var v: MergeInputs;
    if (PROLOGUE != P_ATTN_MERGE) { return v; }
    if (lid < params.heads * SPLITS) {
        let at = lid * params.part_stride + params.head_dim;
        v.stats = vec2<f32>(src[at], src[at + 1u]);  // as loaded: see part_stats (gemv_prologues.wgsl)
    }
    if (EARLY_MERGE) {
        let a = split_outputs(lid);
        v.a0 = a[0];
        v.a1 = a[1];
        if (KP > WG_SIZE) {
            let b = split_outputs(lid + WG_SIZE);
            v.b0 = b[0];
            v.b1 = b[1];
        }
    }
    return v;
}

// The epilogue's reads (invocation r < ROWS takes row r): a the bias's word (bias_value), b the old
// value (residuals) or the time embedding (E_COND_EOS), c the gate (E_GATED_RESIDUAL), sum the words
// of the sum added to a residual (sum_in).
struct Tail { a: u32, b: f32, c: f32, sum: vec2<u32> }

fn load_tail(group: u32, lid: u32) -> Tail {
    var t: Tail;
    let r = group * ROWS + lid;
    if (lid < ROWS && r < params.rows) {
        t.a = bias_word(r);
        if (EPILOGUE == E_RESIDUAL || EPILOGUE == E_GATED_RESIDUAL) { t.b = dst[params.dst_offset + r]; }
        if (EPILOGUE == E_RESIDUAL && params.sum_in != 0u) {  // sums over params.rows elements
            let at = params.sum_in - 1u + r;
            t.sum = vec2<u32>(bitcast<u32>(src[at]), bitcast<u32>(src[at + params.rows]));
        }
        if (EPILOGUE == E_GATED_RESIDUAL) { t.c = aux[params.mod_gate + r]; }
        if (EPILOGUE == E_COND_EOS && r < params.segs[0].end) { t.b = aux[params.aux_offset + r]; }
    }
    return t;
}

// E_DOWN_SPLIT: this invocation's fc2 rows (lid, lid + 256) over the workgroup's 16 columns, when fc2 is
// q8 and a workgroup has 16 rows of fc1 (16 lanes a row): one 16-byte load and a scale word a row.
struct DownShare { w: array<vec4<u32>, 2>, scale_words: array<u32, 2>, q8: bool }

fn load_down_share(group: u32, lid: u32) -> DownShare {
    var d: DownShare;
    if (EPILOGUE != E_DOWN_SPLIT || ROWS != 16u || DOWN_TURNS > 2u) { return d; }
    let seg = params.segs[1];
    if (seg.kind != KIND_Q8) { return d; }
    d.q8 = true;
    let first = group * ROWS;
    for (var t = 0u; t < DOWN_TURNS; t++) {
        let o = min(lid + t * WG_SIZE, DOWN - 1u);
        d.w[t] = weight_words4(seg.word + o * (seg.padded / 4u) + first / 4u);
        d.scale_words[t] = q8_scale_word(seg.scales, o, seg.padded, first / 32u);
    }
    return d;
}
