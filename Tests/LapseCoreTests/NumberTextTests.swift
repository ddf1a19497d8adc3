// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

/// The one number formatter: whole numbers bare, others shortest or to a number of decimals, trailing zeros gone.
@Suite struct NumberTextTests {
    @Test(
        arguments: [
            (12.0, nil, "12"), (-3.0, nil, "-3"), (0.3, nil, "0.3"), (29.97, nil, "29.97"),
            (0.1 + 0.2, nil, "0.30000000000000004"),
            (0.39999, 2, "0.4"), (48.8584123456, 7, "48.8584123"), (2.29450, 7, "2.2945"), (-0.00000001, 7, "0"),
            (1.5, 2, "1.5"), (3600, 2, "3600"), (1e300, nil, "1e+300"), (.infinity, nil, "inf")
        ] as [(Double, Int?, String)])
    func compact(value: Double, digits: Int?, text: String) {
        #expect(NumberText.compact(value, digits: digits) == text)
    }

    /// Decimal numbers only: what `Double(_:)` also reads — hex floats, nan, inf, text after a NUL — is refused
    /// (issue #42: `0x1p3` and `1\0junk` were taken as coordinates).
    @Test(
        arguments: [
            ("12", 12), ("-3.5", -3.5), ("+0.25", 0.25), (".5", 0.5), ("5.", 5), ("1e3", 1000), ("-2.5E-2", -0.025),
            ("0x1p3", nil), ("0x10", nil), ("nan", nil), ("inf", nil), ("-infinity", nil), ("1\0junk", nil),
            ("", nil), ("-", nil), (".", nil), ("1e", nil), ("e5", nil), ("1.2.3", nil), ("1-2", nil), (" 1", nil),
            ("1e999", nil), ("٣", nil), ("1_000", nil)
        ] as [(String, Double?)])
    func decimal(text: String, value: Double?) {
        #expect(NumberText.decimal(text) == value, "\(text)")
    }
}

/// A list file's durations are decimal seconds and its lines hold no NUL byte (the system would open only the name
/// before it): each is an error naming the list and line (issue #42).
@Suite struct ImageListTests {
    @Test(
        arguments: [
            ("a.jpg\t0x1p1\n", "list.txt:1: '0x1p1' is not a duration in seconds"),
            ("# title\na.jpg\tnan\n", "list.txt:2: 'nan' is not a duration in seconds"),
            ("a.jpg\nb.jpg\u{0}.png\n", "list.txt:2: the line has a NUL byte")
        ])
    func badLinesAreNamed(text: String, reason: String) throws {
        let list = TestData.scratchDirectory("image-list").appendingPathComponent("list.txt")
        try Data(text.utf8).write(to: list)
        #expect {
            try ImageInputs.expand(["@" + list.path])
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func decimalDurationsAreRead() throws {
        let list = TestData.scratchDirectory("image-list-ok").appendingPathComponent("list.txt")
        try Data("a.jpg\t2.5\nb.jpg\t1e1\nc.jpg\n".utf8).write(to: list)
        let inputs = try ImageInputs.expand(["@" + list.path])
        #expect(inputs.map(\.duration) == [2.5, 10, nil])
    }
}

/// The memory a machine has free is read, and more than that is refused with a line that says how much.
@Suite struct MemoryCheckTests {
    @Test func moreThanIsFreeIsRefused() throws {
        let free = try #require(MemoryCheck.available())
        #expect(free > 16 << 20)
        try MemoryCheck.check(1 << 20, subject: "out.png", for: "a small view")
        #expect {
            try MemoryCheck.check(free + (1 << 30), subject: "out.png", for: "a 99999x99999 view")
        } throws: { error in
            let e = error as? LapseError
            return e?.code == .other && e?.reason.hasPrefix("a 99999x99999 view needs about ") == true
                && e?.reason.contains("of memory, more than the ") == true
        }
    }
}
