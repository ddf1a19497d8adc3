// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Fast ISO 8601 / RFC 3339 date-times as GPX uses them: `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`
/// (no zone means UTC, as GPX specifies). Hand-written because a formatter per point is too slow for large tracks.
enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= b.count else { return nil }
            var v = 0
            for k in 0..<digits {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += digits
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
            i < b.count, b[i] == 84 || b[i] == 116 || b[i] == 32
        else { return nil }
        i += 1
        guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour <= 24, minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == 46 || b[i] == 44 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48 && b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if i < b.count {
            if b[i] == 90 || b[i] == 122 {
                i += 1
            } else if b[i] == 43 || b[i] == 45 {
                let sign = b[i] == 45 ? -1 : 1
                i += 1
                guard let oh = number(2) else { return nil }
                _ = expect(58)
                guard let om = number(2) else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// `2025-03-14T07:00:00Z`, or with milliseconds when the time has a fraction of a second.
    static func format(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        var whole = Int(t.rounded(.down))
        var millis = Int(((t - Double(whole)) * 1000).rounded())
        if millis == 1000 {
            whole += 1
            millis = 0
        }
        let days = Int((Double(whole) / 86_400).rounded(.down))
        let secs = whole - days * 86_400
        let (y, m, d) = civilFromDays(days)
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        var s = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
        s += "T\(pad(secs / 3600, 2)):\(pad(secs / 60 % 60, 2)):\(pad(secs % 60, 2))"
        if millis != 0 { s += ".\(pad(millis, 3))" }
        return s + "Z"
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension Substring {
    /// The text without leading and trailing ASCII whitespace (space, tab, CR, LF). Much faster than Foundation's
    /// `trimmingCharacters(in:)`, which dominated the time to read large GPX files.
    var trimmedASCII: Substring {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) })
        else {
            return Substring()
        }
        return self[first...last]
    }
}

extension String {
    /// See ``Substring/trimmedASCII``.
    var trimmedASCII: Substring { self[...].trimmedASCII }
}
