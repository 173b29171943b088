// Renderer entry: picks the API transport and mounts the UI.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient } from './api/client';
import { App } from './app';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

createRoot(container).render(
  <StrictMode>
    <App client={createClient()} />
  </StrictMode>,
);
