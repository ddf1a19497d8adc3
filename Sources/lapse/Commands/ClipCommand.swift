// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum ClipCommand: Command {
    static let name = "clip"
    static let summary = "Cut a time range out of a local or online video without re-encoding (not yet built)"
    static let help = """
        lapse clip [options]

        Cut a time range out of a local or online video without re-encoding (not yet built)
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse clip is not built yet")
    }
}
