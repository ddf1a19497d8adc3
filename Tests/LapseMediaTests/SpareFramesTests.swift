// SPDX-License-Identifier: GPL-3.0-or-later
import Testing

@testable import LapseMedia

/// Pictures given back are kept up to the limit, the oldest going first, and handed out by size.
@Suite struct SpareFramesTests {
    @Test func sparesAreKeptToTheLimitAndTakenBySize() {
        let spares = SpareFrames(limit: 2)
        var first = YUVFrame(width: 4, height: 2)
        first.y[0] = 1
        var second = YUVFrame(width: 4, height: 2)
        second.y[0] = 2
        spares.give(first)
        spares.give(second)
        spares.give(YUVFrame(width: 8, height: 4)) // the first goes
        #expect(spares.count == 2)
        #expect(spares.take(width: 2, height: 2) == nil)
        #expect(spares.take(width: 4, height: 2)?.y[0] == 2)
        #expect(spares.take(width: 4, height: 2) == nil)
        #expect(spares.take(width: 8, height: 4)?.width == 8)
        #expect(spares.count == 0)
        spares.give(YUVFrame(width: 4, height: 2))
        spares.removeAll()
        #expect(spares.count == 0)
        let none = SpareFrames(limit: 0)
        none.give(YUVFrame(width: 4, height: 2))
        #expect(none.count == 0)
    }
}
