// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import LapseCore
import Synchronization
import Testing

/// An input sequence that signals when its iterator is freed (when the queue's threads are gone).
private final class Freed: Sendable {
    let semaphore = DispatchSemaphore(value: 0)
}

private struct CountingSequence: Sequence {
    let freed: Freed
    func makeIterator() -> Iterator { Iterator(freed: freed) }
    final class Iterator: IteratorProtocol {
        let freed: Freed
        var n = 0
        init(freed: Freed) { self.freed = freed }
        func next() -> Int? {
            defer { n += 1 }
            return n
        }
        deinit { freed.semaphore.signal() }
    }
}

private struct Failure: Error, Equatable { var index: Int }

@Suite struct OrderedWorkTests {
    /// Results come in input order whatever order the threads finish in; an error comes at its place, after
    /// every earlier result.
    @Test func resultsAndErrorsComeInInputOrder() async throws {
        let queue = OrderedWorkQueue(0..<200, workers: 4) { i, value -> Int in
            if value % 7 == 0 { usleep(UInt32(200 * (value % 5))) } // out-of-order finishing
            return value * 2
        }
        var got: [Int] = []
        while let v = try await queue.next() { got.append(v) }
        #expect(got == (0..<200).map { $0 * 2 })

        let failing = OrderedWorkQueue(0..<50, workers: 3) { i, value -> Int in
            if value == 17 { throw Failure(index: i) }
            return value
        }
        var before: [Int] = []
        do {
            while let v = try await failing.next() { before.append(v) }
            Issue.record("no error came")
        } catch let error as Failure {
            #expect(error == Failure(index: 17))
        }
        #expect(before == Array(0..<17))
    }

    /// A consumer waiting for a result is suspended, not holding a pool thread: with eight tasks a core also
    /// waiting, another task still runs and is the one that lets the transform finish (were the waits blocking
    /// pool threads, the test would hang until its time limit).
    @Test(.timeLimit(.minutes(1))) func waitingHoldsNoPoolThread() async throws {
        let gate = DispatchSemaphore(value: 0)
        let count = 8 * ProcessInfo.processInfo.activeProcessorCount
        let queues = (0..<count).map { _ in
            OrderedWorkQueue(0..<1, workers: 1) { _, v -> Int in
                gate.wait()
                return v + 7
            }
        }
        let waiters = queues.map { queue in Task { try await queue.next() } }
        let opened = await Task {
            for _ in 0..<count { gate.signal() }
            return true
        }.value
        #expect(opened)
        for w in waiters { #expect(try await w.value == 7) }
    }

    /// Cancelling the consumer's task ends its wait with CancellationError while the transform still runs.
    @Test(.timeLimit(.minutes(1))) func cancellingTheConsumerEndsItsWait() async throws {
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let queue = OrderedWorkQueue(0..<1, workers: 1) { _, v -> Int in
            entered.signal()
            gate.wait()
            return v
        }
        let consumer = Task { try await queue.next() }
        entered.wait()
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        gate.signal()
    }

    /// The threads never run more than `lookahead` ahead of the consumer.
    @Test func workStaysBoundedAheadOfTheConsumer() async throws {
        let started = Mutex(0)
        let queue = OrderedWorkQueue(0..<1000, workers: 2, lookahead: 4) { _, value -> Int in
            started.withLock { $0 += 1 }
            return value
        }
        for expected in 0..<10 {
            #expect(try await queue.next() == expected)
            #expect(started.withLock { $0 } <= expected + 1 + 4 + 2)
        }
        queue.cancel()
        await #expect(throws: CancellationError.self) { try await queue.next() }
    }

    /// A queue dropped without cancel() stops its threads: they hold only its shared state, which the queue's
    /// deinit cancels, so they exit and free the input (an endless one here).
    @Test func aDroppedQueueStopsItsThreads() async throws {
        let freed = Freed()
        do {
            let queue = OrderedWorkQueue(CountingSequence(freed: freed), workers: 2, lookahead: 2) { _, v in v }
            #expect(try await queue.next() == 0)
            #expect(try await queue.next() == 1)
        }
        #expect(freed.semaphore.wait(timeout: .now() + 30) == .success, "the threads still hold the input")
    }

    /// forEachOrdered: consumed in order, never more than `concurrency` produced ahead of the consumer.
    @Test func forEachOrderedConsumesInOrderWithBoundedConcurrency() async throws {
        let inFlight = Mutex((now: 0, most: 0))
        var consumed: [Int] = []
        try await forEachOrdered(
            count: 100, concurrency: 3,
            produce: { i -> Int in
                inFlight.withLock {
                    $0.now += 1
                    $0.most = max($0.most, $0.now)
                }
                if i % 3 == 0 { try await Task.sleep(nanoseconds: 200_000) }
                inFlight.withLock { $0.now -= 1 }
                return i * i
            },
            consume: { index, value in
                #expect(value == index * index)
                consumed.append(index)
            })
        #expect(consumed == Array(0..<100))
        #expect(inFlight.withLock { $0.most } <= 3)
        // An error in produce ends the loop with that error.
        await #expect(throws: Failure.self) {
            try await forEachOrdered(
                count: 10, concurrency: 2,
                produce: { i -> Int in
                    if i == 4 { throw Failure(index: i) }
                    return i
                }, consume: { _, _ in })
        }
    }
}
