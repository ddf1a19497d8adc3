// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import LapseCore
import Synchronization
import Testing

@Suite struct BlockingQueueTests {
    /// While a call blocks on the queue, eight tasks a core waiting behind it hold none of the concurrency pool's
    /// threads: another task still runs, and it is the one that unblocks the call. (Were the waiters blocking
    /// pool threads — a lock, `DispatchQueue.sync` — it could never run: the test would hang until its time
    /// limit.) Every call's result comes back to its caller.
    @Test(.timeLimit(.minutes(1))) func waitersDoNotHoldThePool() async throws {
        let queue = BlockingQueue(label: "test")
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic(false)
        let first = Task {
            try await queue.run {
                started.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
                return -1
            }
        }
        while !started.load(ordering: .sequentiallyConsistent) { await Task.yield() }
        let count = 8 * ProcessInfo.processInfo.activeProcessorCount
        let waiters = (0..<count).map { i in Task { try await queue.run { i } } }
        let opened = await Task {
            gate.signal()
            return true
        }.value
        #expect(opened)
        #expect(try await first.value == -1)
        var results: [Int] = []
        for w in waiters { results.append(try await w.value) }
        #expect(results == Array(0..<count))
    }

    /// Posted work runs in its place among the calls, and posting returns while a call blocks: the caller (a
    /// synchronous function) is the one that unblocks it afterwards — were `post` waiting, the test would hang.
    @Test(.timeLimit(.minutes(1))) func postedWorkKeepsItsPlaceAndDoesNotWait() async throws {
        let queue = BlockingQueue(label: "test")
        let gate = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        let started = Atomic(false)
        let blocked = Task {
            try await queue.run {
                started.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
                order.withLock { $0.append("blocked") }
            }
        }
        while !started.load(ordering: .sequentiallyConsistent) { await Task.yield() }
        queue.post { order.withLock { $0.append("posted") } }
        gate.signal()
        try await blocked.value
        try await queue.run { order.withLock { $0.append("after") } }
        #expect(order.withLock { $0 } == ["blocked", "posted", "after"])
    }

    @Test func errorsComeBack() async {
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await BlockingQueue(label: "test").run { throw Failure() } }
    }
}
