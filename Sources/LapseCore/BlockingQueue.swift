// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch

/// Runs blocking work — a decoder that reads and decodes, a wait on a lock — one call at a time on a thread of
/// Dispatch's, off Swift's concurrency pool, for async callers: a caller suspends instead of holding one of the
/// pool's few threads (one per core) while it waits. Calls run in the order they were made.
///
/// Cancellation does not stop a call that has started: blocking work is expected to be short (one frame).
public final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// - Parameter label: the queue's name (shown by debuggers and profilers).
    public init(label: String) { queue = DispatchQueue(label: label) }

    /// Queues `body` after the calls already made and returns at once, without waiting for it or for them:
    /// for work a synchronous caller must not wait for (it would block its thread while a call runs).
    public func post(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// `body`'s result (or error), once it has run on the queue.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
