// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Runs a blocking transform over a sequence of inputs on several threads, a bounded number ahead of the
/// consumer, and hands the results back in input order. Memory stays bounded by `lookahead` results
/// whatever the number of inputs.
///
/// Used for the pipelines' "decode/render in parallel, encode in order" stage. The transforms run on threads of
/// the queue's own, off Swift's concurrency pool; the consumer awaits results. Errors are delivered in order
/// too: ``next()`` throws the error of the first input whose transform failed, once all earlier results
/// have been taken. Call ``cancel()`` when stopping before the end, so the threads exit.
public final class OrderedWorkQueue<Input: Sendable, Output: Sendable>: Sendable {
    /// What the worker threads share with the consumer. The threads hold only this, not the queue, so a queue
    /// dropped without ``cancel()`` is cancelled by its deinit and its threads exit.
    private let state: State

    /// Starts `workers` threads.
    /// - Parameters:
    ///   - inputs: consumed lazily, under a lock, one element per task.
    ///   - workers: threads, ≥ 1 (default: the number of active processors).
    ///   - lookahead: most results computed ahead of the consumer, ≥ `workers` (default `2 × workers`).
    ///   - transform: called with each input's index and value, on a worker thread.
    public init<S: Sequence>(
        _ inputs: S, workers: Int = ProcessInfo.processInfo.activeProcessorCount,
        lookahead: Int? = nil,
        transform: @escaping @Sendable (Int, Input) throws -> Output
    ) where S.Element == Input {
        let workers = max(1, workers)
        let state = State(
            iterator: inputs.makeIterator(), lookahead: max(workers, lookahead ?? 2 * workers),
            transform: transform, workers: workers)
        self.state = state
        for _ in 0..<workers {
            let thread = Thread { state.work() }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    deinit { cancel() }

    /// The next result in input order; `nil` after the last one. One consumer at a time: a second call while one
    /// waits is a programming error (it traps). A caller waiting for it is suspended (bridged
    /// with a continuation the worker that delivers it resumes), not blocking one of the concurrency pool's
    /// threads; cancelling the caller's task cancels the queue.
    /// - Throws: the transform's error for that input, or `CancellationError` after ``cancel()``.
    public func next() async throws -> Output? {
        try await withTaskCancellationHandler {
            while true {
                switch try state.take() {
                case .value(let output): return output
                case .end: return nil
                case .notYet: await state.waitForChange()
                }
            }
        } onCancel: { [state] in
            state.cancel()
        }
    }

    /// Stops issuing work; threads finish their current item and exit.
    public func cancel() { state.cancel() }

    private enum Taken {
        case value(Output)
        case end
        case notYet
    }

    private final class State: @unchecked Sendable {
        // @unchecked: all mutable state is guarded by `condition` (the workers' waits need a condition variable,
        // which Mutex lacks).
        private let condition = NSCondition()
        /// The consumer, suspended until the result it waits for (or the end, or a cancel) is there.
        private var waiter: CheckedContinuation<Void, Never>?
        private var iterator: any IteratorProtocol<Input>
        private var exhausted = false
        private var issued = 0
        private var consumed = 0
        private var results: [Int: Result<Output, any Error>] = [:]
        private var cancelled = false
        private var running: Int
        private let lookahead: Int
        private let transform: @Sendable (Int, Input) throws -> Output

        init(
            iterator: any IteratorProtocol<Input>, lookahead: Int,
            transform: @escaping @Sendable (Int, Input) throws -> Output,
            workers: Int
        ) {
            self.iterator = iterator
            self.lookahead = lookahead
            self.transform = transform
            running = workers
        }

        func work() {
            while true {
                condition.lock()
                while !cancelled && !exhausted && issued - consumed >= lookahead { condition.wait() }
                if cancelled || exhausted {
                    running -= 1
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                guard let input = iterator.next() else {
                    exhausted = true
                    running -= 1
                    condition.broadcast()
                    let consumer = wakeConsumer()
                    condition.unlock()
                    consumer?.resume()
                    return
                }
                let index = issued
                issued += 1
                condition.unlock()

                let result = Result { try transform(index, input) }

                condition.lock()
                results[index] = result
                condition.broadcast()
                let consumer = wakeConsumer()
                condition.unlock()
                consumer?.resume()
            }
        }

        /// The suspended consumer, taken to be resumed (after the lock is released) when what it waits for is
        /// there; called under the lock.
        private func wakeConsumer() -> CheckedContinuation<Void, Never>? {
            guard waiter != nil, cancelled || results[consumed] != nil || (exhausted && consumed >= issued) else {
                return nil
            }
            defer { waiter = nil }
            return waiter
        }

        /// The next result if it is there.
        func take() throws -> Taken {
            condition.lock()
            defer { condition.unlock() }
            if cancelled { throw CancellationError() }
            if let result = results.removeValue(forKey: consumed) {
                consumed += 1
                condition.broadcast()
                return .value(try result.get())
            }
            return exhausted && consumed >= issued ? .end : .notYet
        }

        /// Returns once the next result, the end or a cancel is there (at once if it already is).
        func waitForChange() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                condition.lock()
                if cancelled || results[consumed] != nil || (exhausted && consumed >= issued) {
                    condition.unlock()
                    continuation.resume()
                    return
                }
                precondition(waiter == nil, "OrderedWorkQueue.next() called by two consumers at once")
                waiter = continuation
                condition.unlock()
            }
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.broadcast()
            let consumer = wakeConsumer()
            condition.unlock()
            consumer?.resume()
        }

        /// Worker threads still running (for tests).
        var runningThreads: Int {
            condition.lock()
            defer { condition.unlock() }
            return running
        }
    }

    /// Worker threads still running (they exit after ``cancel()``, at the end of the inputs, or once the queue
    /// is dropped).
    public var runningThreads: Int { state.runningThreads }
}
