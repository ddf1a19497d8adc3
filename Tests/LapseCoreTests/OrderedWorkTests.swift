// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import LapseCore
import Synchronization
import Testing

private struct Failure: Error, Equatable { var index: Int }

@Suite struct OrderedWorkTests {
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
