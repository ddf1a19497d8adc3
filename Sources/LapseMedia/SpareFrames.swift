// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Y′CbCr pictures given back by whoever was done with them (a frame rendered), kept for the next picture of their
/// size to be written into: their planes' memory is already mapped, where a new picture's would be mapped and
/// zeroed by the kernel page by page (a 2048 × 1024 frame's luma plane is 2 MB, a 5760 × 2880 photo's 16 MB: more
/// than glibc's mmap threshold, which `lapse` sets at 1 MB, so each is mapped anew and unmapped when freed).
///
/// A picture given back is written over only if no one else still holds it: otherwise the write copies it first
/// (copy on write), so giving back a picture still in use costs a copy, never a wrong picture.
public final class SpareFrames: Sendable {
    private let frames = Mutex<[YUVFrame]>([])
    /// Pictures kept at most (the oldest goes first when more come back).
    public let limit: Int

    /// - Parameter limit: pictures kept at most, ≥ 0 (about the pictures in flight between a decode and the render
    ///   that gives it back).
    public init(limit: Int) { self.limit = max(0, limit) }

    /// Keeps `frame` for a later picture of its size (moved in: no other reference to its planes stays here).
    public func give(_ frame: consuming YUVFrame) {
        guard limit > 0 else { return }
        var kept: YUVFrame? = consume frame
        // The oldest one out goes after the lock is let go (its planes are unmapped).
        let evicted: YUVFrame? = frames.withLock { frames in
            let oldest = frames.count == limit ? frames.removeFirst() : nil
            frames.append(kept.take()!)
            return oldest
        }
        _ = consume evicted
    }

    /// A picture of `width × height` given back, if one is kept (its pixels are the old picture's; its planes of
    /// the sizes such a picture has), else nil.
    public func take(width: Int, height: Int) -> YUVFrame? {
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        return frames.withLock { frames in
            guard
                let i = frames.lastIndex(where: {
                    $0.width == width && $0.height == height && $0.y.count == width * height
                        && $0.cb.count == chroma && $0.cr.count == chroma
                })
            else { return nil }
            return frames.remove(at: i)
        }
    }

    /// Pictures kept (for tests).
    var count: Int { frames.withLock { $0.count } }

    /// Lets every picture kept go.
    public func removeAll() { frames.withLock { $0.removeAll() } }
}
