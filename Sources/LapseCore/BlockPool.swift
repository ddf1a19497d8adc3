// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Blocks of raw memory kept for the next user that needs one of the same size: frame-sized buffers made and
/// dropped every frame (projection tables, decoded pictures' planes) would otherwise be mapped afresh, faulted in
/// and zeroed by the kernel each time (glibc maps blocks above the `lapse` executable's 1 MB mmap threshold and
/// unmaps them when freed). The blocks given back wait, oldest first, up to `maxBlocks` of them and `maxBytes` in
/// all (the oldest freed to make room), so a process that uses many sizes keeps no more than that.
package final class BlockPool: Sendable {
    /// One allocation: its start (64-byte aligned) and size. Sendable because it has one owner at a time: its user,
    /// or the pool (under its lock) between users.
    package struct Block: @unchecked Sendable {
        package let base: UnsafeMutableRawPointer
        package let bytes: Int

        package init(base: UnsafeMutableRawPointer, bytes: Int) {
            self.base = base
            self.bytes = bytes
        }
    }

    private let maxBlocks: Int
    private let maxBytes: Int
    /// Blocks waiting, oldest first, and their bytes.
    private let free = Mutex<(blocks: [Block], bytes: Int)>(([], 0))

    /// A pool keeping at most `maxBlocks` blocks and `maxBytes` bytes waiting.
    package init(maxBlocks: Int = .max, maxBytes: Int = .max) {
        self.maxBlocks = maxBlocks
        self.maxBytes = maxBytes
    }

    /// A block of `bytes`: the newest waiting of that size, else a new one (its content undefined either way).
    package func take(bytes: Int) -> Block {
        let kept = free.withLock { free -> Block? in
            guard let i = free.blocks.lastIndex(where: { $0.bytes == bytes }) else { return nil }
            free.bytes -= bytes
            return free.blocks.remove(at: i)
        }
        return kept
            ?? Block(base: UnsafeMutableRawPointer.allocate(byteCount: max(bytes, 1), alignment: 64), bytes: bytes)
    }

    /// Gives back a block from ``take(bytes:)``: it waits, the oldest waiting freed beyond the limits.
    package func give(_ block: Block) {
        let evicted = free.withLock { free -> [Block] in
            free.blocks.append(block)
            free.bytes += block.bytes
            var evicted: [Block] = []
            while free.blocks.count > maxBlocks || free.bytes > maxBytes {
                let oldest = free.blocks.removeFirst()
                free.bytes -= oldest.bytes
                evicted.append(oldest)
            }
            return evicted
        }
        for block in evicted { block.base.deallocate() }
    }

    /// Blocks of `bytes` waiting.
    package func waiting(bytes: Int) -> Int { free.withLock { $0.blocks.count { $0.bytes == bytes } } }

    /// Blocks waiting and their bytes.
    package var waiting: (blocks: Int, bytes: Int) { free.withLock { ($0.blocks.count, $0.bytes) } }
}
