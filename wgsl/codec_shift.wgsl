// The end of a codec chunk, and the start of a take.
//
// Each convolution stage keeps its left context in the first rows of its buffer and writes a chunk
// after them. After a chunk (RESET false) this kernel moves each stage's last `words` values (its new
// context) to the front, then moves the codec's frame counter on by the chunk's frames. For a new
// take (RESET true) it zeroes every context and the counter instead. One workgroup, so the counter is
// written after every thread has read it. Up to 8 regions, each in one of two arenas: no kernel that
// writes one region of an arena reads another region of it in the same dispatch.

struct Params {
    regions: u32,
    frames: u32,
    frame_word: u32,
    end_word: u32,
    avail_word: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // per region: arena (0 or 1), first word of the context, its words, where the new context starts
    jobs: array<vec4<u32>, 8>,
}

const BATCH: u32 = 8u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> arena0: array<f32>;
@group(0) @binding(2) var<storage, read_write> arena1: array<f32>;
@group(0) @binding(3) var<storage, read_write> state: array<u32>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(local_invocation_index) lid: u32) {
    var start = 0u;
    var run = true;
    if (!RESET) {
        start = chunk_start();
        run = !past_end(start);
    }
    if (run) {
        for (var j = 0u; j < p.regions; j++) {
            let job = p.jobs[j];
            // BATCH values a turn, all loaded before any is stored: a store waits for its load, and
            // every later load waits for that store, so one value a turn cost a memory latency each
            for (var i0 = lid; i0 < job.z; i0 += BATCH * 256u) {
                var values: array<f32, BATCH>;
                for (var b = 0u; b < BATCH; b++) {
                    let at = job.y + job.w + min(i0 + b * 256u, job.z - 1u);
                    if (job.x == 1u) {
                        values[b] = arena1[at];
                    } else {
                        values[b] = arena0[at];
                    }
                }
                for (var b = 0u; b < BATCH; b++) {
                    let i = i0 + b * 256u;
                    if (i < job.z) {
                        if (job.x == 1u) {
                            arena1[job.y + i] = select(values[b], 0.0, RESET);
                        } else {
                            arena0[job.y + i] = select(values[b], 0.0, RESET);
                        }
                    }
                }
            }
        }
    }
    workgroupBarrier();
    if (run && lid == 0u) {
        state[p.frame_word] = select(start + p.frames, 0u, RESET);
    }
}
