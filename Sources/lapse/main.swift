// SPDX-License-Identifier: GPL-3.0-or-later
// The `lapse` executable: the process's settings (memory, FFmpeg's log, signals), then the command line (LapseCLI).
internal import CMalloc
import Foundation
import LapseCLI
import LapseKit

// Memory freed stays in the process for the next frame rather than going back to the kernel, to be faulted in and
// zeroed again (x264, the decoders and the frame buffers allocate and free megabytes a frame): glibc's mmap threshold
// fixed at 1 MB (a frame's smaller buffers come from the heap; larger blocks, such as a long route's growing arrays
// or a stitched panorama's planes, are mapped and unmapped whole, so they leave no holes) and its trim threshold at
// 1 GB (mallopt(3)). A hyperlapse of a 360° video spends half the system time it did with glibc's defaults
// (bench/hyperlapse-video.sh, `time`'s system seconds), with the same peak memory; at 32 MB a 150 000-point GPX's
// peak grew by 13 MB, and at 4 MB the 2 MB chroma planes of Street View canvases, left in the heap, made the peak of
// 1000 panoramas 21 % above that of 100 (bench/hyperlapse.sh). At 1 MB the other benches run in the same time, once
// the projection tables a stabilised hyperlapse makes a frame keep their own memory for the next (TableMemory):
// mapped anew, they cost a stabilised 360° video about 0.3 s more system time (bench/stabilize.sh).
_ = mallopt(M_MMAP_THRESHOLD, 1 << 20)
_ = mallopt(M_TRIM_THRESHOLD, 1 << 30)

// FFmpeg's own messages, to diagnose: LAPSE_FFMPEG_LOG=warning (the library reads no environment itself).
if let level = ProcessInfo.processInfo.environment["LAPSE_FFMPEG_LOG"], !MediaInput.showLibraryLog(level: level) {
    FileHandle.standardError.write(
        Data("warning: LAPSE_FFMPEG_LOG=\(level) is not quiet, error, warning, info, verbose or debug\n".utf8))
}

let signalSources = installSignalHandlers()
let status = await runMain()
withExtendedLifetime(signalSources) {}
exit(status)
