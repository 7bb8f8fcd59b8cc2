// Reading tensors out of the weights blob. Include this file after a shader that declares
//     @group(0) @binding(N) var<storage, read> weights: array<u32>;
// Every tensor sits at a word offset given by the kernel's parameters, in one of three kinds:
//   q8  (KIND 0): int8 values, rows padded to a multiple of 32 values, 4 values per word (lowest byte
//                 first), then one f16 scale per 32 values of a row, 2 scales per word;
//   f16 (KIND 1): 2 values per word, row-major;
//   f32 (KIND 2): 1 value per word, row-major.
// All arithmetic is f32 and f16 is unpacked with unpack2x16float, so no shader needs `shader-f16`.

const KIND_Q8: u32 = 0u;
const KIND_F16: u32 = 1u;
const KIND_F32: u32 = 2u;

// Four consecutive q8 values of a row (unscaled): word `quad` of the row.
fn q8_quad(base: u32, row: u32, padded_cols: u32, quad: u32) -> vec4<f32> {
    return vec4<f32>(unpack4xI8(weights[base + row * (padded_cols / 4u) + quad]));
}

// Words at..at + 3 of the weights: 16 q8 values, loaded side by side. (Reading them as one 16-byte
// element through an array<vec4<u32>> view of the weights, with every q8 tensor placed on 16 bytes,
// measured no faster on the H200.)
fn weight_words4(at: u32) -> vec4<u32> {
    return vec4<u32>(weights[at], weights[at + 1u], weights[at + 2u], weights[at + 3u]);
}

// The dot product of 16 q8 values (four words, unscaled) with x0..x3.
fn q8_dot16(w: vec4<u32>, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>) -> f32 {
    return dot(vec4<f32>(unpack4xI8(w.x)), x0) + dot(vec4<f32>(unpack4xI8(w.y)), x1)
        + dot(vec4<f32>(unpack4xI8(w.z)), x2) + dot(vec4<f32>(unpack4xI8(w.w)), x3);
}

// One of the two f16 values a word holds: the high half when `odd`.
fn f16_half(word: u32, odd: bool) -> f32 {
    let pair = unpack2x16float(word);
    return select(pair.x, pair.y, odd);
}

// The scale of block `block` (32 values) of a q8 row.
fn q8_scale(scales: u32, row: u32, padded_cols: u32, block: u32) -> f32 {
    return q8_scale_value(q8_scale_word(scales, row, padded_cols, block), row, padded_cols, block);
}

// Element `index` of an f16 tensor.
fn f16_at(base: u32, index: u32) -> f32 {
    return f16_half(weights[base + index / 2u], (index & 1u) == 1u);
}

// Element `index` of an f32 tensor.
fn f32_at(base: u32, index: u32) -> f32 {
    return bitcast<f32>(weights[base + index]);
}

// Element (row, col) of a tensor of any kind; `cols` is the logical row length (`padded` for q8
// rows). The slow, general path: fast kernels read whole words instead.
fn weight_at(kind: u32, base: u32, scales: u32, cols: u32, padded: u32, row: u32, col: u32) -> f32 {
    if (kind == KIND_Q8) {
        let word = weights[base + row * (padded / 4u) + col / 4u];
        let value = f32(unpack4xI8(word)[col % 4u]);
        return value * q8_scale(scales, row, padded, col / 32u);
    }
    if (kind == KIND_F16) {
        return f16_at(base, row * cols + col);
    }
    return f32_at(base, row * cols + col);
}

// Raw words, for loads issued early and turned into values where they are used: arithmetic on a
// loaded value waits for the load, and every load after it in the shader waits too.
// The word of element `index` of a small f16 or f32 vector, and the element from that word.
fn vector_word(kind: u32, base: u32, index: u32) -> u32 {
    if (kind == KIND_F16) {
        return weights[base + index / 2u];
    }
    return weights[base + index];
}

fn vector_value(kind: u32, word: u32, index: u32) -> f32 {
    if (kind == KIND_F16) {
        return f16_half(word, (index & 1u) == 1u);
    }
    return bitcast<f32>(word);
}

// The word holding the scale of block `block` of a q8 row, and that scale from the word.
fn q8_scale_word(scales: u32, row: u32, padded_cols: u32, block: u32) -> u32 {
    return weights[scales + (row * (padded_cols / 32u) + block) / 2u];
}

fn q8_scale_value(word: u32, row: u32, padded_cols: u32, block: u32) -> f32 {
    return f16_half(word, ((row * (padded_cols / 32u) + block) & 1u) == 1u);
}

// A small vector of any kind (biases, norm weights): element `index`.
fn vector_at(kind: u32, base: u32, index: u32) -> f32 {
    return vector_value(kind, vector_word(kind, base, index), index);
}
