export { debugRepository } from './debugRepository.js';
