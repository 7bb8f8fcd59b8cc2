// Where a codec chunk starts, and whether it runs at all. Every codec kernel's uniform `p` has
// `frame_word`, `end_word` and `avail_word`, and it binds the engine's `state` words (u32):
//   state[frame_word]  the codec's frame counter: the first frame of this chunk (the chunk's last kernel
//                      moves it on by the chunk's frames);
//   state[end_word], state[avail_word]  frame counts (NO_WORD: not checked): a chunk starting at or
//                      after either returns at once, so chunks encoded past the end of speech cost a
//                      few microseconds each.

const NO_WORD: u32 = 0xffffffffu;

fn chunk_start() -> u32 {
    return state[p.frame_word];
}

fn past_end(start: u32) -> bool {
    if (p.end_word != NO_WORD && start >= state[p.end_word]) {
        return true;
    }
    return p.avail_word != NO_WORD && start >= state[p.avail_word];
}
