package org.example.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ArithmeticTest {
  @Test
  void adds() {
    assertEquals(4, 2 + 2);
  }
}
