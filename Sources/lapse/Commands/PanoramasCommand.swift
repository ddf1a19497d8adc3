// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum PanoramasCommand: Command {
    static let name = "panoramas"
    static let summary = "Find and download the panoramas along a route (not yet built)"
    static let help = """
        lapse panoramas [options]

        Find and download the panoramas along a route (not yet built)
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse panoramas is not built yet")
    }
}
