// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Synchronization

/// A ``VideoFrameReader`` for async callers: it is opened, read and decoded on a thread of its own (a
/// ``BlockingQueue``), so a network read that waits or a frame that takes long to decode never holds one of the
/// concurrency pool's threads. Calls run one at a time, in the order made.
public final class BackgroundVideoReader: Sendable {
    private let reader: Mutex<VideoFrameReader>
    private let queue: BlockingQueue

    private init(_ reader: sending VideoFrameReader, queue: BlockingQueue) {
        self.reader = Mutex(reader)
        self.queue = queue
    }

    /// Opens `location` on the reader's own thread (see ``VideoFrameReader/init(_:options:)``).
    /// - Throws: as ``VideoFrameReader/init(_:options:)``.
    public static func open(_ location: URL, options: MediaInput.Options = MediaInput.Options()) async throws
        -> BackgroundVideoReader
    {
        let queue = BlockingQueue(label: "lapse.video-reader")
        return try await queue.run {
            BackgroundVideoReader(try VideoFrameReader(location, options: options), queue: queue)
        }
    }

    /// Runs `body` with the reader on its thread and gives back its result.
    /// - Throws: what `body` throws.
    public func run<T: Sendable>(_ body: @escaping @Sendable (VideoFrameReader) throws -> T) async throws -> T {
        try await queue.run { [self] in try reader.withLock { try body($0) } }
    }
}
