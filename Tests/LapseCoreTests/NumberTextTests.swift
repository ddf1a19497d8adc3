// SPDX-License-Identifier: GPL-3.0-or-later
import LapseCore
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
}
