// SPDX-License-Identifier: GPL-3.0-or-later
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
        func next() -> Int? { defer { n += 1 }; return n }
        deinit { freed.semaphore.signal() }
    }
}

private struct Failure: Error, Equatable { var index: Int }

@Suite struct OrderedWorkTests {
    /// Results come in input order whatever order the threads finish in; an error comes at its place, after
    /// every earlier result.
    @Test func resultsAndErrorsComeInInputOrder() throws {
        let queue = OrderedWorkQueue(0..<200, workers: 4) { i, value -> Int in
            if value % 7 == 0 { usleep(UInt32(200 * (value % 5))) }   // out-of-order finishing
            return value * 2
        }
        var got: [Int] = []
        while let v = try queue.next() { got.append(v) }
        #expect(got == (0..<200).map { $0 * 2 })

        let failing = OrderedWorkQueue(0..<50, workers: 3) { i, value -> Int in
            if value == 17 { throw Failure(index: i) }
            return value
        }
        var before: [Int] = []
        let error = try #require(throws: Failure.self) { while let v = try failing.next() { before.append(v) } }
        #expect(error == Failure(index: 17))
        #expect(before == Array(0..<17))
    }

    /// The threads never run more than `lookahead` ahead of the consumer.
    @Test func workStaysBoundedAheadOfTheConsumer() throws {
        let started = Mutex(0)
        let queue = OrderedWorkQueue(0..<1000, workers: 2, lookahead: 4) { _, value -> Int in
            started.withLock { $0 += 1 }
            return value
        }
        for expected in 0..<10 {
            #expect(try queue.next() == expected)
            #expect(started.withLock { $0 } <= expected + 1 + 4 + 2)
        }
        queue.cancel()
        #expect(throws: CancellationError.self) { try queue.next() }
    }

    /// A queue dropped without cancel() stops its threads: they hold only its shared state, which the queue's
    /// deinit cancels, so they exit and free the input (an endless one here).
    @Test func aDroppedQueueStopsItsThreads() throws {
        let freed = Freed()
        do {
            let queue = OrderedWorkQueue(CountingSequence(freed: freed), workers: 2, lookahead: 2) { _, v in v }
            #expect(try queue.next() == 0)
            #expect(try queue.next() == 1)
        }
        #expect(freed.semaphore.wait(timeout: .now() + 30) == .success, "the threads still hold the input")
    }

    /// forEachOrdered: consumed in order, never more than `concurrency` produced ahead of the consumer.
    @Test func forEachOrderedConsumesInOrderWithBoundedConcurrency() async throws {
        let inFlight = Mutex((now: 0, most: 0))
        var consumed: [Int] = []
        try await forEachOrdered(count: 100, concurrency: 3, produce: { i -> Int in
            inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            if i % 3 == 0 { try await Task.sleep(nanoseconds: 200_000) }
            inFlight.withLock { $0.now -= 1 }
            return i * i
        }, consume: { index, value in
            #expect(value == index * index)
            consumed.append(index)
        })
        #expect(consumed == Array(0..<100))
        #expect(inFlight.withLock { $0.most } <= 3)
        // An error in produce ends the loop with that error.
        await #expect(throws: Failure.self) {
            try await forEachOrdered(count: 10, concurrency: 2, produce: { i -> Int in
                if i == 4 { throw Failure(index: i) }
                return i
            }, consume: { _, _ in })
        }
    }
}
